"""Print the mutation score of each module from mutmut's recorded results, as a Markdown table.

    python scripts/mutation_score.py MUTANTS_DIR PACKAGE [MUTANT_NAME ...]

Used by `scripts/mutation <target> --score [COUNT [SEED]]`: names given (a seeded sample), only
those mutants count. The score is (killed + timeout) / mutants, as in mutation/BASELINE.md; a
mutant not run yet counts as "not checked" and lowers it.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

from mutmut.stats import status_by_exit_code

MODULE = re.compile(r"^(?P<module>.+?)\.x[_ǁ]")
COLUMNS = ("killed", "timeout", "survived", "no tests", "not checked")


def recorded(mutants_dir: Path, package: str) -> dict[str, int | None]:
    """Mutant name -> its exit code, for every mutant of the package mutmut generated."""
    codes: dict[str, int | None] = {}
    for meta in (mutants_dir / package.replace(".", "/")).rglob("*.py.meta"):
        codes.update(json.loads(meta.read_text())["exit_code_by_key"])
    return codes


def score_table(codes: dict[str, int | None], package: str) -> str:
    by_module: dict[str, Counter[str]] = {}
    for name, code in codes.items():
        module = MODULE.match(name)
        if module is None or not name.startswith(f"{package}."):
            raise ValueError(f"not a mutant name of {package}: {name!r}")
        short = module["module"][len(package) + 1 :]
        by_module.setdefault(short, Counter())[status_by_exit_code[code]] += 1
    by_module["all"] = sum(by_module.values(), Counter())
    header = ("module", "mutants", *COLUMNS, "other", "score")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for module, counts in sorted(by_module.items(), key=lambda item: (item[0] == "all", item[0])):
        total = sum(counts.values())
        shown = [counts[column] for column in COLUMNS]
        score = (counts["killed"] + counts["timeout"]) / total
        row = (module, total, *shown, total - sum(shown), f"{score:.1%}")
        lines.append("| " + " | ".join(map(str, row)) + " |")
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    mutants_dir, package, names = Path(argv[0]), argv[1], argv[2:]
    codes = recorded(mutants_dir, package)
    if names:
        unknown = sorted(set(names) - set(codes))
        if unknown:
            raise SystemExit(f"mutmut has no record of {len(unknown)} mutants, e.g. {unknown[0]}")
        codes = {name: codes[name] for name in names}
    print(score_table(codes, package))


if __name__ == "__main__":
    main(sys.argv[1:])
