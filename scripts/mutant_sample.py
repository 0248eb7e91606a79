"""Print a seeded random sample of the mutant names mutmut generated for one target.

    python scripts/mutant_sample.py MUTANTS_DIR PACKAGE COUNT SEED

Used by `scripts/mutation <target> --sample COUNT [SEED]`: a full sync/ run takes hours here,
a sample of a few dozen mutants gives an estimate of the score with a known error.
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

MUTANT_FUNCTION = re.compile(r"^\s*def (\S+__mutmut_\d+)\(", re.M)


def mutant_names(mutants_dir: Path, package: str) -> list[str]:
    names = []
    for path in (mutants_dir / package.replace(".", "/")).rglob("*.py"):
        module = ".".join(path.relative_to(mutants_dir).with_suffix("").parts)
        names += [f"{module}.{name}" for name in MUTANT_FUNCTION.findall(path.read_text())]
    return sorted(names)


def main(argv: list[str]) -> None:
    mutants_dir, package, count, seed = Path(argv[0]), argv[1], int(argv[2]), int(argv[3])
    names = mutant_names(mutants_dir, package)
    print("\n".join(random.Random(seed).sample(names, min(count, len(names)))))


if __name__ == "__main__":
    main(sys.argv[1:])
