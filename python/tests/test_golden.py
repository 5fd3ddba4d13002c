"""The golden corpus through arcbatch.dsl: every case, decoded to the reference's Python
values, gives the recorded result (compared by canonical text, so bool vs int and tuple vs
frozenset count), or raises an arcbatch.DslError deriving from the recorded exception."""

import builtins
import json

import arcbatch
from arcbatch import dsl

from conftest import canonical, shared


def decode(j):
    if j is None or isinstance(j, (bool, int)):
        return j
    if isinstance(j, list):
        return tuple(decode(x) for x in j)
    if "fs" in j:
        return frozenset(decode(x) for x in j["fs"])
    return getattr(dsl, j["fn"])


def text(j) -> str:
    return json.dumps(j, separators=(",", ":"), sort_keys=True)


def judge(case):
    """None when the case passes, "skipped" when it cannot be judged, else the failure."""
    try:
        result = getattr(dsl, case["prim"])(*map(decode, case["args"]))
        if "apply" in case:
            result = result(*map(decode, case["apply"]))
    except arcbatch.DslError as e:
        raised = case.get("raises")
        if raised is None:
            return f"raised {type(e).__name__}: {e}"
        expected = getattr(builtins, raised)
        return None if isinstance(e, expected) else f"raised {type(e).__name__}, the reference {raised}"
    if "raises" in case:
        return f"expected {case['raises']}, got {canonical(result)}"
    actual = canonical(result)
    if "any_of" in case:
        return None if actual in {text(o) for o in case["any_of"]} else f"got {actual}, not one of any_of"
    if "multiset" in case:
        ok = isinstance(result, tuple) and sorted(canonical(m) for m in result) == sorted(
            text(m) for m in case["out"]
        )
        return None if ok else f"got {actual}, expected the multiset {text(case['out'])}"
    if "order_sensitive" in case:
        return "skipped"
    expected = text(case["out"])
    return None if actual == expected else f"got {actual}, expected {expected}"


def test_every_golden_case_through_the_python_module():
    cases_dir = shared("golden/cases")
    passed, skipped, failures = 0, 0, []
    for path in sorted(cases_dir.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            case = json.loads(line)
            verdict = judge(case)
            if verdict is None:
                passed += 1
            elif verdict == "skipped":
                skipped += 1
            else:
                failures.append(f"{case['prim']} {text(case['args'])[:120]}: {verdict}")
    print(f"golden through arcbatch.dsl: {passed} passed, {len(failures)} failed, {skipped} skipped")
    assert not failures, "\n".join(failures[:30])
    assert passed > 18000
