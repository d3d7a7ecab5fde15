"""The benchmark harness: its family registry, and what ``--report`` writes (a quick run of
one small family, ours and NumPy only). Times are not asserted: only the structure."""

from __future__ import annotations

import json
import os
import sys

import pytest

from benchmarks import __main__ as cli
from benchmarks import markdown, peers
from benchmarks.families import FAMILIES, load
from benchmarks.harness import Family

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_families_are_registered_once_and_goals_name_real_workloads():
    assert len(FAMILIES) == len(set(FAMILIES))
    keys, goals = {}, []
    for name in FAMILIES:
        fam = load(name)
        assert isinstance(fam, Family) and fam.name == name
        assert (fam.workloads is None) != (fam.run is None), name
        if fam.workloads is not None:
            for w in fam.workloads(True):
                assert w.key not in keys, f"workload {w.key} in {keys.get(w.key)} and {name}"
                keys[w.key] = {impl for impl, _ in w.impls}
                assert all(impl in peers.ALL for impl in keys[w.key]), w.key
                assert w.reference in keys[w.key], w.key
        else:
            for key in fam.keys or (name,):
                assert key not in keys, key
                keys[key] = set(peers.ALL)
        goals += fam.goals
    for g in goals:
        for side in (g.numerator, g.denominator):
            if side is not None:
                assert side[0] in keys and side[1] in keys[side[0]], g.figure
    with pytest.raises(KeyError, match="no benchmark family 'nope'"):
        load("nope")


def test_report_writes_markdown_charts_json_and_readme_block(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    readme = tmp_path / "README.md"
    readme.write_text(f"# title\n\nbefore\n\n{markdown.START}\nold text\n{markdown.END}\n\n"
                      "after\n")
    docs = tmp_path / "docs"
    rc = cli.main(["--quick", "--only", "chain", "--peers", "numpy", "eager", "compiled",
                   "--report", "--docs", str(docs), "--readme", str(readme),
                   "--json", str(tmp_path / "latest.json")])
    assert rc == 0
    out = capsys.readouterr().out
    assert "small chain fwd+bwd: our eager / our compiled" in out

    results = json.loads((docs / "benchmarks.json").read_text())
    assert results == json.loads((tmp_path / "latest.json").read_text())
    assert list(results["families"]) == ["chain"]
    assert results["families"]["chain"]["chart"] == "chain.png"
    cells = results["workloads"]["chain"]["impls"]
    assert set(cells) == {"numpy", "eager", "compiled"}       # --peers
    for impl, c in cells.items():
        assert c["status"] == "ok" and c["check"] == "ok" and c["seconds"] > 0, impl
    assert cells["compiled"]["compiler_stats"]["hits"] > 0
    meta = results["meta"]
    assert meta["quick"] and meta["cpu"] and meta["versions"]["numpy"]
    assert meta["command"].startswith("python -m benchmarks --quick --only chain")
    goal = next(g for g in results["goals"] if g["figure"].startswith("small chain"))
    assert goal["value"] == pytest.approx(cells["eager"]["seconds"] /
                                          cells["compiled"]["seconds"])

    for name in ("chain.png", "headline.png"):
        data = (docs / "img" / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) < 150_000, name

    md = (docs / "benchmarks.md").read_text()
    for part in ("# Benchmarks", "## The run", "## Headline", "## small graph",
                 "![headline](img/headline.png)", "(img/chain.png)", "## Goals",
                 "**ours compiled**", meta["cpu"]):
        assert part in md, part
    ratio = cells["numpy"]["seconds"] / cells["compiled"]["seconds"]
    row = next(line for line in md.splitlines() if line.startswith("| small graph"))
    assert f"| {markdown.R.fmt_ratio(ratio)} |" in row

    text = readme.read_text()
    assert text.startswith("# title\n\nbefore\n\n") and text.endswith("\n\nafter\n")
    assert "old text" not in text and "## How fast" in text
    assert "](docs/img/headline.png)" in text and "](docs/benchmarks.md)" in text
    assert markdown.COMMAND in text
    assert text.count(markdown.START) == 1 and text.count(markdown.END) == 1


def test_report_without_matplotlib_says_how_to_install(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)   # import matplotlib fails
    rc = cli.main(["--quick", "--only", "cache_hit", "--report", "--docs", str(tmp_path),
                   "--readme", ""])
    assert rc == 2
    assert 'pip install -e ".[bench]"' in capsys.readouterr().err
    assert not os.listdir(tmp_path)                          # stopped before running


def test_only_rejects_unknown_names(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--only", "no_such_family", "--json", ""])
    err = capsys.readouterr().err
    assert "no family or workload 'no_such_family'" in err and "gelu_32m" in err


def test_update_readme_needs_the_markers(tmp_path):
    p = tmp_path / "README.md"
    p.write_text("# no block here\n")
    with pytest.raises(ValueError, match="no '<!-- benchmarks:start"):
        markdown.update_readme(str(p), "x")
    assert p.read_text() == "# no block here\n"


def test_benchmarks_and_docs_refer_to_nothing_outside_the_repository():
    paths = [os.path.join(ROOT, "README.md"), os.path.join(ROOT, "pyproject.toml")]
    for top in ("benchmarks", "docs"):
        for d, dirs, files in os.walk(os.path.join(ROOT, top)):
            dirs[:] = [x for x in dirs if x not in ("results", "__pycache__")]
            paths += [os.path.join(d, f) for f in files if f.endswith((".py", ".md", ".json"))]
    bad = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            text = f.read()
        if "/work/" in text or "goals_from" in text:
            bad.append(os.path.relpath(p, ROOT))
    assert not bad, bad


def test_report_writes_the_committed_docs_only_with_update_docs():
    _, args = cli.parse(["--report"])
    assert args.docs == cli.REPORT_DIR and args.readme == ""        # benchmarks/results/
    assert os.path.relpath(cli.REPORT_DIR, ROOT) == os.path.join("benchmarks", "results",
                                                                 "report")
    _, args = cli.parse(["--update-docs"])                          # implies --report
    assert args.report and args.docs == cli.DOCS_DIR and args.readme == cli.README
    for argv in (["--report", "--docs", cli.DOCS_DIR], ["--report", "--readme", cli.README]):
        with pytest.raises(SystemExit):
            cli.parse(argv)                                         # committed: refused


def test_realprograms_quick_runs_one_program(capsys):
    """The realprograms family's --quick mode on one program (makemore), ours only, with a
    short end-to-end budget: steady-state and end-to-end cells, checked against eager."""
    from benchmarks.families import realprograms
    rc = realprograms.main(["--quick", "--programs", "makemore", "--budget", "0.5",
                            "--peers", "eager", "compiled", "compiled fwd"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "| makemore | steady |" in out and "| makemore | end to end |" in out
    res = realprograms.run_programs(True, {"eager", "compiled"}, lambda m: None,
                                    programs=["makemore"], budget=0.3, steady=False)
    cell = res["rp_makemore_e2e"]["impls"]["compiled"]
    assert cell["status"] == "ok" and cell["check"] == "ok" and cell["detail"]["steps"] > 0
