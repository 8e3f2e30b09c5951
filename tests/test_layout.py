"""The instructor's side reads forward (issue 30, item 4): no import cycle anywhere in ``course/`` (imports inside
functions count), no module ``__getattr__``, and each stage of ``course/grading/`` imports only the stages a
submission went through before it (and the shared modules); inside ``classroom/``, each phase imports only the
phases before it. Read from the source with ``ast``: nothing is imported or run."""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COURSE = REPO / "course"

# A submission's path, in order: each name may import only names of a smaller or equal rank.
STAGES = {
    "course.grading.config": 0, "course.grading.paths": 0, "course.grading.text": 0,
    "course.grading.intake": 1, "course.grading.records": 1,       # a record holds the intake's report
    "course.grading.run": 2,
    "course.grading.judge": 3,
    "course.grading.nbgrader": 4, "course.grading.inkernel": 4,
    "course.grading.classroom": 5,
    "course.grading.authoring": 6,
    "course.grading.cli": 7, "course.grading.__main__": 7,
}
# Inside classroom/, the phases of a class's grading, in the order pipeline.grade_class calls them.
PHASES = ["stage", "task", "pools", "gradebook", "tables", "feedback", "analysis", "pipeline"]
PHASES = {f"course.grading.classroom.{name}": i for i, name in enumerate(PHASES)}


def modules() -> dict[str, Path]:
    out = {}
    for f in sorted(COURSE.rglob("*.py")):
        name = ".".join(f.relative_to(REPO).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = f
    return out


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The course modules that ``name`` imports anywhere in its file (a package's own submodules included)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        found |= {t for t in targets if t in known and t != name}
    return found


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def rank(name: str, table: dict[str, int]) -> int | None:
    """The rank of the longest prefix of ``name`` in ``table``."""
    found = [prefix for prefix in table if name == prefix or name.startswith(prefix + ".")]
    return table[max(found, key=len)] if found else None


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_import_reader_sees_imports_inside_functions(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def later():\n    from course.grading.classroom import pipeline\n    import course.grading.paths\n")
    known = {"course.grading.classroom.pipeline": f, "course.grading.paths": f, "course.grading.classroom": f}
    assert imports("course.grading.x", f, known) == {"course.grading.classroom", "course.grading.classroom.pipeline",
                                                     "course.grading.paths"}


def test_no_import_cycle_in_the_course():
    found = cycles(graph())
    assert not found, f"import cycles (imports inside functions count): {found}"


def test_no_module_getattr():
    lazy = [name for name, path in modules().items()
            if any(isinstance(n, ast.FunctionDef) and n.name == "__getattr__"
                   for n in ast.parse(path.read_text()).body)]
    assert not lazy, f"modules that resolve names lazily (__getattr__): {lazy}"


def test_every_grading_module_has_a_stage():
    missing = [name for name in modules() if name.startswith("course.grading.") and rank(name, STAGES) is None]
    assert not missing, f"modules of course/grading/ in no stage of tests/test_layout.py: {missing}"
    folders = {p.name for p in (COURSE / "grading").iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders == {n.split(".")[2] for n in STAGES if (COURSE / "grading" / n.split(".")[2]).is_dir()}


def test_each_stage_imports_only_the_stages_before_it():
    back = [f"{a} (stage {rank(a, STAGES)}) imports {b} (stage {rank(b, STAGES)})"
            for a, targets in graph().items() if a.startswith("course.grading.")
            for b in sorted(targets) if b.startswith("course.grading.")
            and rank(b, STAGES) is not None and rank(a, STAGES) is not None and rank(b, STAGES) > rank(a, STAGES)]
    assert not back, "a submission's path must read forward:\n" + "\n".join(back)


def test_a_class_grading_calls_its_phases_in_order():
    assert set(PHASES) | {"course.grading.classroom", "course.grading.classroom.dask_tls"} == \
        {n for n in modules() if n.startswith("course.grading.classroom")}, "a classroom module in no phase"
    back = [f"{a} imports {b}" for a, targets in graph().items() if a in PHASES
            for b in sorted(targets) if b in PHASES and PHASES[b] > PHASES[a]]
    assert not back, "\n".join(back)
    # grade_class's body names the phases in the order a submission meets them
    tree = ast.parse((COURSE / "grading" / "classroom" / "pipeline.py").read_text())
    body = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "grade_class")
    named = [n.id if isinstance(n, ast.Name) else n.attr
             for n in sorted((n for n in ast.walk(body) if isinstance(n, (ast.Name, ast.Attribute))),
                             key=lambda n: (n.lineno, n.col_offset))]
    order = ["_stage_all", "_references", "_run", "record", "_reports", "write_feedback", "_analysis"]
    assert [c for c in named if c in order] == order, named
    nested = [n.name for n in ast.walk(body) if isinstance(n, (ast.FunctionDef, ast.Lambda)) and n is not body
              and hasattr(n, "name")]
    assert not nested, f"grade_class reads top to bottom: no function defined inside it ({nested})"
