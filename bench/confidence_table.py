"""The report of ``bench/confidence_signals.py``: which feature sets are compared, and their
AUROC per dev set, held out and cross-validated, as a Markdown table."""

from __future__ import annotations

from collections.abc import Sequence

from anuvad.evaluation.calibration import CalibrationRow, calibrate


def feature_sets(base: list[str], candidates: list[str]) -> dict[str, list[str]]:
    """The shipped features, with each group of candidates, with all, and each one alone."""
    sets = {"shipped (output)": base}
    for group in sorted({name.split("_")[0] for name in candidates}):
        sets[f"+ {group}_*"] = base + [c for c in candidates if c.startswith(group + "_")]
    sets["+ all candidates"] = base + candidates
    sets |= {f"{name} alone": [name] for name in candidates if not name.startswith("hidden_")}
    return sets


def table(rows: Sequence[CalibrationRow], sets: dict[str, list[str]]) -> list[str]:
    """One Markdown row per feature set: held-out AUROC / cross-validated AUROC per dev set."""

    def show(value: float | None) -> str:
        return "–" if value is None else f"{value:.3f}"

    lines: list[str] = []
    for label, features in sets.items():
        model = calibrate(rows, features)
        report, cv = model.report["held_out"], model.report["cross_validated"]
        held = {  # each dev set (a domain of one set goes by the domain's name)
            k: v["confidence"]["auroc"]
            for k, v in report.items()
            if k != "pooled" and not any(other.startswith(k + ": ") for other in report)
        }
        if not lines:
            lines += ["| features | " + " | ".join(held) + " |", "|---|" + "---|" * len(held)]
        cells = [f"{show(value)} / {show(cv.get(name, cv.get(_set_of(name, cv))))}"
                 for name, value in held.items()]  # fmt: skip
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def _set_of(domain: str, cv: dict[str, float | None]) -> str:
    """The one dev set of a domain reported by its domain name alone."""
    return next((name for name in cv if name.startswith(domain + ": ")), "")
