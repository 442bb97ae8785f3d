"""Skills benchmark: prompt-section build time and prompt tokens of progressive loading.

Run: python tests/bench/bench_skills.py [--json]
Targets (issue 3): warm rebuild <= 2 ms and cold build <= 100 ms for 200 skills (10 always-on);
prompt tokens for 20 skills (2 always-on) versus every body inlined (design documents: ~81% saved).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop.agent.context import SEPARATOR  # noqa: E402
from desktop.kernel.paths import bundled  # noqa: E402
from desktop.providers.tokens import count_text  # noqa: E402
from desktop.skills.loader import SkillsLoader, skills_xml  # noqa: E402
from tests.bench.figures import Figures  # noqa: E402

WORDS = ("file folder command output check the user request before run result error retry path option "
         "config value list item report summary step format date time network service account token "
         "project change commit branch review install version update read write search filter sort "
         "when then only never always first next finally ask confirm explain short clear exact").split()
FIGURES = Figures()


def sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def body(rng: random.Random, index: int) -> str:
    """About 500 tokens of skill instructions: headings, steps, a command block."""
    parts = [f"# Skill {index}", sentence(rng, 25)]
    for section in ("Steps", "Details", "Examples", "Pitfalls", "Checks"):
        parts.append(f"## {section}")
        parts += [f"{n}. {sentence(rng, 18)}" for n in range(1, 5)]
    parts.append(f"```\ntool-{index} --input data.csv --format json | head -n 20\n```")
    parts.append(sentence(rng, 30))
    return "\n\n".join(parts) + "\n"


def generate(root: Path, count: int, always: int, description_words: int = 25, unavailable: bool = True) -> None:
    """Skills with ~500-token bodies; with `unavailable`, every 7th needs a program that is not installed."""
    rng = random.Random(1)
    for i in range(count):
        name = f"skill-{i:03d}"
        requires = "\n    requires:\n      bins: [absent-tool-xyz]" if unavailable and i % 7 == 3 else ""
        always_line = "\n    always: true" if i < always else ""
        folder = root / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {sentence(rng, description_words)} Use when the user asks about topic {i}.\n"
            f"license: MIT\nmetadata:\n  nanobot:\n    emoji: \"🔧\"{always_line}{requires}\n---\n"
            f"{body(rng, i)}", encoding="utf-8")


def timed(fn: object, repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def build_times(tmp: Path) -> None:
    root = tmp / "many" / "skills"
    generate(root, 200, 10)
    roots = [("workspace", root), ("builtin", bundled("skills")), ("user", tmp / "absent")]
    cold = timed(lambda: SkillsLoader(roots).prompt_sections(), 15)
    loader = SkillsLoader(roots)
    sections = loader.prompt_sections()
    warm = timed(loader.prompt_sections, 300)
    print(f"200 skills (+{len(list(bundled('skills').iterdir()))} built-in), 10 always-on; "
          f"sections: {sum(map(len, sections)):,} chars")
    print(f"  cold build (parse every SKILL.md): median {statistics.median(cold):6.2f} ms, "
          f"min {min(cold):6.2f} ms   (target <= 100 ms)")
    print(f"  warm rebuild (nothing changed):    median {statistics.median(warm):6.2f} ms, "
          f"min {min(warm):6.2f} ms   (target <= 2 ms)")
    FIGURES.add("Skills: cold prompt-section build, 200 skills, median", f"{statistics.median(cold):.2f} ms", "≤ 100 ms")
    FIGURES.add("Skills: warm rebuild, nothing changed, median", f"{statistics.median(warm):.2f} ms", "≤ 2 ms")


def sections_tokens(root: Path) -> int:
    return count_text(SEPARATOR.join(SkillsLoader([("workspace", root)]).prompt_sections()))


def tokens(tmp: Path) -> None:
    print("20 skills, 2 always-on, tiktoken cl100k_base (design documents: ~81% saved):")
    for label, words in (("short descriptions", 8), ("descriptions like the built-ins", 30)):
        progressive_root, inlined_root = tmp / f"p{words}" / "skills", tmp / f"i{words}" / "skills"
        generate(progressive_root, 20, 2, words, unavailable=False)
        generate(inlined_root, 20, 20, words, unavailable=False)
        progressive, inlined = sections_tokens(progressive_root), sections_tokens(inlined_root)
        skills = SkillsLoader([("workspace", progressive_root)]).active()
        per_body = statistics.mean(count_text(s.doc.body) for s in skills)
        per_entry = statistics.mean(count_text(skills_xml([s])) for s in skills) - count_text("<skills>\n</skills>")
        print(f"  {label}: bodies ~{per_body:.0f} tokens, summary entries ~{per_entry:.0f} tokens")
        print(f"    progressive (2 bodies + summary of 18): {progressive:6,} tokens")
        print(f"    every body inlined:                     {inlined:6,} tokens")
        print(f"    saving: {100 * (1 - progressive / inlined):.1f}%")
        FIGURES.add(f"Skills: prompt tokens saved by progressive loading, 20 skills, {label}",
                    f"{100 * (1 - progressive / inlined):.1f} %", "~81 % (design documents)")

    builtin = bundled("skills")
    shipped = count_text(SEPARATOR.join(SkillsLoader([("builtin", builtin)]).prompt_sections()))
    all_bodies = count_text("\n\n".join(p.read_text(encoding="utf-8").split("---\n", 2)[2]
                                        for p in sorted(builtin.glob("*/SKILL.md"))))
    print(f"built-in skills as shipped: {shipped:,} tokens in the prompt vs {all_bodies:,} for all bodies "
          f"({100 * (1 - shipped / all_bodies):.1f}% saved)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="end with the figures as one JSON line")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        build_times(Path(tmp))
        tokens(Path(tmp))
    if args.json:
        print(FIGURES.line())


if __name__ == "__main__":
    main()
