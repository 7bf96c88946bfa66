"""oracle_common: what the Python oracles share (oracle_ml_dtypes.py, oracle_torch.py): running
`fpsim convert` on raw bytes, and counting and printing mismatches the same way."""
import os
import subprocess
import sys

import numpy as np

PRINT_LIMIT = 10  # failure lines printed per comparison; all are counted


def fpsim_convert(fpsim, fmt, policy, data, src="f32"):
    """Codes from `fpsim convert --to fmt --from src --policy policy` for raw little-endian bytes."""
    cmd = [fpsim, "convert", "--to", fmt, "--from", src, "--policy", policy]
    res = subprocess.run(cmd, input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({res.returncode}): "
                           f"{res.stderr.decode(errors='replace').strip()}")
    return res.stdout


def fpsim_missing(path):
    """True, after saying so, when path is not an executable (the fpsim target not built)."""
    if os.access(path, os.X_OK):
        return False
    print(f"FAIL fpsim executable not found at '{path}' (build the fpsim target)", file=sys.stderr)
    return True


class Mismatches:
    """Counts the comparisons of one labelled check against the oracle named `oracle`."""

    def __init__(self, label, oracle):
        self.label, self.oracle, self.checks, self.failures = label, oracle, 0, 0

    def compare(self, inputs, got, want, fmt_in):
        self.checks += len(want)
        bad = np.nonzero(got != want)[0]
        for i in bad[: max(0, PRINT_LIMIT - self.failures)]:
            print(f"FAIL [{self.label}] x={fmt_in(inputs[i])}: fpsim 0x{int(got[i]):02x}, "
                  f"{self.oracle} 0x{int(want[i]):02x}", file=sys.stderr)
        self.failures += len(bad)

    def summary(self):
        """1 on a failure or when nothing was compared, else 0; one line either way."""
        if self.checks == 0:
            print(f"FAIL [{self.label}] made no comparison", file=sys.stderr)
            return 1
        print(f"{'FAIL' if self.failures else 'ok  '} [{self.label}] {self.checks} checks, "
              f"{self.failures} failures", flush=True)
        return 1 if self.failures else 0
