# model-rht-errbound.py: whether one round-to-nearest FP32 FWHT plus an a-priori error bound could
# certify the exact RHT (rhtsum=exact) in place of the interval FWHT's two directed FWHTs, on a
# model of the bench's fill (bell-shaped values times 2^k, k in [-K, K] per row, rounded to BF16).
# The bound: every butterfly's RN error is at most u|result| (u = 2^-24, additions below the normal
# range are exact), so |y_j - exact_j| <= ((1+u)^4 - 1) S <= 4u(1 + 2^-20) S, S = sum |0.25 v_i|
# (or 16 times the largest term, free from the column's range). A column is certified where
# BF16_RNE(y - B) == BF16_RNE(y + B) for all 16 outputs; the rest would need the interval form.
import numpy as np
rng=np.random.default_rng(1)
N=400000
def bf16(x):  # RNE float32->bf16 value, as float64
    b=np.asarray(x,dtype=np.float32).view(np.uint32).astype(np.uint64)
    r=((b+0x7FFF+((b>>16)&1))>>16)<<16
    return r.astype(np.uint32).view(np.float32).astype(np.float64)
for spread in (8,0):
    base=(rng.random((N,16,4)).sum(-1)-2.0)
    k=rng.integers(-spread,spread+1,(N,16)) if spread else np.zeros((N,16),int)
    u=bf16((base*2.0**k).astype(np.float32))
    s=np.array([1,1,1,-1,1,-1,-1,-1,-1,-1,-1,1,-1,1,-1,-1],float)
    w=(u*s*0.25).astype(np.float32)
    # fp32 FWHT RN
    x=w.copy()
    h=1
    while h<16:
        x=x.reshape(N,-1,2,h); a=x[:,:,0,:].copy(); b=x[:,:,1,:].copy()
        x[:,:,0,:]=a+b; x[:,:,1,:]=a-b; x=x.reshape(N,16); h*=2
    xe=w.astype(np.float64); h=1
    while h<16:
        xe=xe.reshape(N,-1,2,h); a=xe[:,:,0,:].copy(); b=xe[:,:,1,:].copy()
        xe[:,:,0,:]=a+b; xe[:,:,1,:]=a-b; xe=xe.reshape(N,16); h*=2
    S=np.abs(w.astype(np.float64)).sum(1,keepdims=True)
    am=np.abs(w.astype(np.float64)).max(1,keepdims=True)
    emaxb=2.0**(np.floor(np.log2(np.where(am>0,am,1)))+1)*16
    g=4*2.0**-24*(1+2**-20)
    y=x.astype(np.float64)
    assert (np.abs(y-xe)<=g*S+0).all()
    for name,Sb in (("sum",S),("emax",emaxb)):
        B=g*Sb
        lo=bf16((y-B).astype(np.float32)); hi=bf16((y+B).astype(np.float32))
        badc=(lo!=hi).any(1)
        badw=badc.reshape(-1,32).any(1)
        print(f"spread {spread} {name}: cols refused {badc.mean()*100:.3f}%  32-col warps {badw.mean()*100:.2f}%")
