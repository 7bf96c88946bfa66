#!/usr/bin/env python3
"""sass_profile.py: read a CSV of gpu/tools/ncu_sass.sh (Nsight Compute's source page, SASS) and
print, per kernel: warp and thread instructions executed (per element with --elems N), the
opcode mix weighted by executions, and the straight runs of instructions (same execution count,
consecutive addresses) that cost the most, with their stall samples.
usage: sass_profile.py FILE.csv[.gz] [--elems N] [--runs K] [--show NAME-SUBSTRING]"""
import argparse, collections, csv, gzip, io, re, sys


def kernels(path):
    raw = gzip.open(path, 'rt') if path.endswith('.gz') else open(path)
    name, header, rows = None, None, []
    for rec in csv.reader(raw):
        if not rec:
            continue
        if rec[0] == 'Kernel Name':
            if name is not None:
                yield name, rows
            name, header, rows = rec[1], None, []
        elif rec[0] == 'Address':
            header = rec
        elif header is not None:
            rows.append(dict(zip(header, rec)))
    if name is not None:
        yield name, rows


def num(s):
    try:
        return int(s.replace(',', ''))
    except ValueError:
        return 0


def opcode(src):
    t = src.strip()
    if t.startswith('@'):
        t = t.split(None, 1)[1]
    return t.split()[0].split('.')[0] if t else '?'


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('csv')
    ap.add_argument('--elems', type=float, default=0)
    ap.add_argument('--runs', type=int, default=12)
    ap.add_argument('--show', default='')
    o = ap.parse_args()
    for name, rows in kernels(o.csv):
        if o.show not in name:
            continue
        warp = sum(num(r['Instructions Executed']) for r in rows)
        thr = sum(num(r['Thread Instructions Executed']) for r in rows)
        samples = sum(num(r['Warp Stall Sampling (All Samples)']) for r in rows)
        print('==', name[:110])
        per = ''
        if o.elems:
            per = '; per element: %.2f warp, %.1f thread' % (warp / o.elems, thr / o.elems)
        print('   warp instructions %d, thread %d%s; stall samples %d' % (warp, thr, per, samples))
        stalls = collections.Counter()
        for r in rows:
            for k, v in r.items():
                if k.startswith('stall_') and '(Not Issued)' not in k:
                    stalls[k[6:]] += num(v)
        print('   stall samples by reason: ' + ', '.join(
            '%s %.0f%%' % (k, 100.0 * v / max(samples, 1)) for k, v in stalls.most_common(8) if v))
        mix = collections.Counter()
        for r in rows:
            mix[opcode(r['Source'])] += num(r['Thread Instructions Executed'])
        div = o.elems or thr or 1
        print('   mix (thread instr%s): ' % (' per element' if o.elems else ' share') + ', '.join(
            '%s %.2f' % (k, v / div) for k, v in mix.most_common(22)))
        # straight runs: consecutive rows with the same execution count
        runs, cur = [], []
        for r in rows:
            if cur and num(r['Instructions Executed']) != num(cur[-1]['Instructions Executed']):
                runs.append(cur)
                cur = []
            cur.append(r)
        if cur:
            runs.append(cur)
        runs.sort(key=lambda rr: -sum(num(x['Instructions Executed']) for x in rr))
        for rr in runs[:o.runs]:
            cnt = num(rr[0]['Instructions Executed'])
            st = sum(num(x['Warp Stall Sampling (All Samples)']) for x in rr)
            m = collections.Counter(opcode(x['Source']) for x in rr)
            why = collections.Counter()
            for x in rr:
                for k, v in x.items():
                    if k.startswith('stall_') and '(Not Issued)' not in k:
                        why[k[6:]] += num(v)
            print('   run at %s: %d instr x %d executions (%.1f%% of warp instr, %.1f%% of samples%s): %s' % (
                rr[0]['Address'][-5:], len(rr), cnt, 100.0 * cnt * len(rr) / max(warp, 1),
                100.0 * st / max(samples, 1),
                ', mostly ' + '/'.join(k for k, v in why.most_common(2) if v) if st else '',
                ', '.join('%s %d' % kv for kv in m.most_common(10))))


if __name__ == '__main__':
    main()
