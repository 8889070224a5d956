"""User-facing text cites the papers by authors, year and section, never by the project's
private background files (their names, seed numbers or paths), which users do not have."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# "MATH.md", "DESIGN.md", "seed 003", "seeds 001–004", "seed 003 §4", "(003 §6)", "003 §4",
# "MATH §2", "../shared", "/work/shared", "seeds/004_..."
FORBIDDEN = re.compile(
    r"MATH\.md|DESIGN\.md|\bMATH §|\bseeds? ?0\d\d\b|\(0\d\d\b|\b00\d §|\.\./shared|/shared/"
    r"|\bseeds/|\b00[0-4]_[0-9a-f]{6}",
    re.IGNORECASE,
)
SUFFIXES = {".py", ".md", ".j2", ".ipynb", ".toml", ".txt", ".html"}


def user_facing_files() -> list[Path]:
    files = [ROOT / "README.md"]
    for folder in ("src", "docs"):
        files += [
            p
            for p in (ROOT / folder).rglob("*")
            if p.is_file() and p.suffix in SUFFIXES and ".egg-info" not in str(p)
        ]
    return files


def find_private_references(files: list[Path]) -> list[str]:
    hits = []
    for path in files:
        for no, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if FORBIDDEN.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{no}: {line.strip()[:120]}")
    return hits


def test_the_pattern_catches_the_loose_forms() -> None:
    for text in (
        "see MATH.md §2",
        "seed 003 §4",
        "(003 §6)",
        "DESIGN.md",
        "../shared/x",
        "MATH §1",
        "seeds/004_d9fa220dd9115dc8.txt",
        "Seed 001",
    ):
        assert FORBIDDEN.search(text), text
    for text in (
        "Hahn (2020) §5",
        "Yang et al. (arXiv:2412.09925v1) Theorem 26",
        "seed = 3",
        "--seed 0",
        "n = 1003 §",
        "10 003",
    ):
        assert not FORBIDDEN.search(text), text


def test_source_docs_and_readme_cite_papers_not_private_files() -> None:
    hits = find_private_references(user_facing_files())
    assert not hits, "private references in user-facing text:\n" + "\n".join(hits)


UNVERSIONED = re.compile(
    r"(?:Yang et al\.|Angluin),?\s+\(?(?:TACL )?2026\)?,?\s+"
    r"(?:Thms?\.|Cors?\.|Theorem|Corollary|Lemma|Prop|§|Appendix|Definition)"
)
"""A number of Yang, Strobl, Chiang & Angluin cited with the published version's year: the
numbers are the arXiv preprint's (2412.09925v1), and the citation must say so."""


def test_the_pattern_catches_unversioned_numbers() -> None:
    for text in (
        "Yang et al. (2026) Thm. 20",
        "Yang, Strobl, Chiang & Angluin (TACL 2026) §4",
        "Yang et al.\n(2026) Lemma 8",
        "Chiang & Angluin, TACL 2026) Theorem 26",
    ):
        assert UNVERSIONED.search(text), text
    for text in (
        "Yang et al. (arXiv:2412.09925v1) Thm. 20",
        "Simulating Hard Attention Using Soft Attention* (TACL 2026, vol. 14, pp. 147–166)",
        "Yang et al. (2026), general hard attention (published version)",
    ):
        assert not UNVERSIONED.search(text), text


def test_theorem_numbers_name_the_preprint_version() -> None:
    files = user_facing_files() + [
        p for p in (ROOT / "benchmarks").rglob("*") if p.is_file() and p.suffix in SUFFIXES
    ]
    hits = [
        f"{path.relative_to(ROOT)}: {m.group(0)!r}"
        for path in files
        for m in UNVERSIONED.finditer(path.read_text(errors="replace"))
    ]
    assert not hits, "numbers cited without the preprint version:\n" + "\n".join(hits)
