"""Prints a markdown table of ratios between criterion results of the last run.

Reads rows from stdin: `label | numerator bench | denominator bench | target`, where a bench
is `group/function` under target/criterion. Uses the median of each.
"""
import json
import pathlib
import sys

root = pathlib.Path("target/criterion")


def median(bench: str) -> float:
    path = root / bench / "new" / "estimates.json"
    return json.loads(path.read_text())["median"]["point_estimate"]


print("| what | ratio | target | raw (ns, median) |")
print("|---|---|---|---|")
for line in sys.stdin:
    if not line.strip():
        continue
    label, num, den, target = (part.strip() for part in line.split("|"))
    a, b = median(num), median(den)
    indent = "  " if line.startswith("  ") else ""
    name = f"↳ {label}" if indent else label
    print(f"| {name} | {a / b:.2f}× | {target} | {a:.1f} / {b:.1f} |")
