"""A batt program of arcbatch gen, as Python; generated, do not edit.

arcbatch gen --library dsl --count 32 --seed 0 --mutate 0.2 --mutants 1
60 programs (32 solvers, 28 mutants); 374 steps, 278 after merging

`evaluate(tasks)` runs every program on every sample with arcbatch's batched operations.
"""

from arcbatch import batch as _batch
from arcbatch import dsl as _dsl


class _Error:
    """An exception raised on one sample, held in its place."""

    def __init__(self, exc):
        self.exc = exc


def _call(f, args):
    if any(isinstance(a, _Error) for a in args):
        return next(a for a in args if isinstance(a, _Error))
    try:
        return f(*args)
    except Exception as exc:  # a DSL error stays in its sample
        return _Error(exc)


def _lane(col, k):
    return col[1] if col[0] == "one" else col[1][k]


def _per_lane(f, args, n):
    return ("each", [_call(f, [_lane(a, k) for a in args]) for k in range(n)])


def _step(name, args, n):
    """Primitive `name` on every sample: batched where only its first argument varies."""
    f = getattr(_dsl, name)
    if all(a[0] == "one" for a in args):
        return ("one", _call(f, [a[1] for a in args]))
    if args[0][0] == "each" and all(a[0] == "one" and not isinstance(a[1], _Error) for a in args[1:]):
        items = args[0][1]
        ok = [k for k in range(n) if not isinstance(items[k], _Error)]
        try:
            done = getattr(_batch, name)([items[k] for k in ok], *[a[1] for a in args[1:]], errors="return")
        except Exception:  # the CPU fallback: one call per sample
            return _per_lane(f, args, n)
        out = list(items)
        for k, v in zip(ok, done):
            out[k] = _Error(v) if isinstance(v, BaseException) else v
        return ("each", out)
    return _per_lane(f, args, n)


def _call_value(function, args, n):
    """A function value called on every sample."""
    return _per_lane(lambda f, *xs: f(*xs), [function] + args, n)


def _group(parts):
    bad = next((p for p in parts if isinstance(p, _Error)), None)
    return bad if bad is not None else tuple(parts)


def _zip_columns(columns, n):
    if all(c[0] == "one" for c in columns):
        return ("one", _group([c[1] for c in columns]))
    return ("each", [_group([_lane(c, k) for c in columns]) for k in range(n)])


def _objects_group(grid, modes, n):
    """objects of one grid for several modes, as the tuple of the results."""
    return _zip_columns([_step("o_g", [grid, ("one", m)], n) for m in modes], n)


def _samples_group(pairs, in_palettes, out_palettes, n):
    """apply(first, S), apply(last, S) and their palettes, as one tuple."""
    inputs = _step("apply", [("one", _dsl.first), pairs], n)
    outputs = _step("apply", [("one", _dsl.last), pairs], n)
    none = ("one", None)
    in_p = _step("mapply", [("one", _dsl.p_g), inputs], n) if in_palettes else none
    out_p = _step("mapply", [("one", _dsl.p_g), outputs], n) if out_palettes else none
    return _zip_columns([inputs, outputs, in_p, out_p], n)


def _pick(group, part, name, args, n):
    """Element `part` of a group, or the call it stands for where the group failed."""
    f = getattr(_dsl, name)

    def one(k):
        g = _lane(group, k)
        if isinstance(g, _Error):
            return _call(f, [_lane(a, k) for a in args])
        lane_args = [_lane(a, k) for a in args]
        bad = next((a for a in lane_args if isinstance(a, _Error)), None)
        return bad if bad is not None else g[part]

    if group[0] == "one" and all(a[0] == "one" for a in args):
        return ("one", one(0))
    return ("each", [one(k) for k in range(n)])


def _same(a, b):
    """Equality that tells bool from int and tuple from frozenset, as arcbatch does."""
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _grid(rows):
    return tuple(tuple(r) for r in rows)


def evaluate(tasks):
    """Every program on every sample of `tasks` (task id -> ARC task dict, train and test
    pairs), scored: a list of {"solver", "task", "correct", "pairs"}, by task then program,
    as `arcbatch batt --cross --json` reports them."""
    ids = sorted(tasks)
    S, I, C, owner = [], [], [], []
    for t in ids:
        task = tasks[t]
        pairs = tuple((_grid(p["input"]), _grid(p["output"])) for p in task["train"])
        for p in task["train"] + task["test"]:
            S.append(pairs)
            I.append(_grid(p["input"]))
            C.append(_grid(p["output"]) if p.get("output") is not None else None)
            owner.append(t)
    outcomes = _run(len(I), ("each", S), ("each", I), ("each", C))
    matches = []
    for t in ids:
        lanes = [k for k in range(len(I)) if owner[k] == t and C[k] is not None]
        for name, _, _ in PROGRAMS:
            output, guards = outcomes[name]
            correct = 0
            for k in lanes:
                if any(isinstance(_lane(g, k), _Error) for g in guards):
                    continue
                if _same(_lane(output, k), C[k]):
                    correct += 1
            matches.append({"solver": name, "task": t, "correct": correct, "pairs": len(lanes)})
    return matches


# (name, origin, mutation or None) of each program, in order.
PROGRAMS = [
    ("solve_demo_mirror", "solve_demo_mirror dsl/demo/solvers.py:6", None),
    ("solve_demo_mirror~1", "solve_demo_mirror dsl/demo/solvers.py:6", "O: vmirror -> hmirror"),
    ("solve_demo_swap_colors", "solve_demo_swap_colors dsl/demo/solvers.py:37", None),
    ("solve_demo_swap_colors~1", "solve_demo_swap_colors dsl/demo/solvers.py:37", "x3 arg 1: x2 -> I"),
    ("solve_25d8a9c8", "solve_25d8a9c8 dsl/solvers.py:15", None),
    ("solve_25d8a9c8~1", "solve_25d8a9c8 dsl/solvers.py:15", "x1 arg 2: T -> F, x2: width -> height, x4 arg 2: hline -> x3, O arg 2: FIVE -> SEVEN"),
    ("solve_3c9b0459", "solve_3c9b0459 dsl/solvers.py:38", None),
    ("solve_44f52bb0", "solve_44f52bb0 dsl/solvers.py:44", None),
    ("solve_44f52bb0~1", "solve_44f52bb0 dsl/solvers.py:44", "x2 arg 1: x1 -> I, x3 arg 2: ONE -> THREE"),
    ("solve_74dd1130", "solve_74dd1130 dsl/solvers.py:80", None),
    ("solve_9565186b", "solve_9565186b dsl/solvers.py:101", None),
    ("solve_9565186b~1", "solve_9565186b dsl/solvers.py:101", "O: fill -> underfill, O arg 2: FIVE -> FOUR"),
    ("solve_a9f96cdd", "solve_a9f96cdd dsl/solvers.py:168", None),
    ("solve_a9f96cdd~1", "solve_a9f96cdd dsl/solvers.py:168", "x5 arg 2: UNITY -> NEG_UNITY, x7 arg 1: ZERO -> EIGHT, x8: fill -> underfill, x8 arg 3: x2 -> x1, x9 arg 2: SIX -> EIGHT, O: fill -> underfill, O arg 1: x10 -> x9, O arg 2: SEVEN -> THREE"),
    ("solve_c9e6f938", "solve_c9e6f938 dsl/solvers.py:211", None),
    ("solve_c9e6f938~1", "solve_c9e6f938 dsl/solvers.py:211", "O: hconcat -> vconcat"),
    ("solve_aedd82e4", "solve_aedd82e4 dsl/solvers.py:239", None),
    ("solve_aedd82e4~1", "solve_aedd82e4 dsl/solvers.py:239", "O arg 2: ONE -> FIVE"),
    ("solve_3618c87e", "solve_3618c87e dsl/solvers.py:271", None),
    ("solve_3618c87e~1", "solve_3618c87e dsl/solvers.py:271", "x3 arg 2: TWO_BY_ZERO -> ORIGIN, O arg 1: x2 -> I"),
    ("solve_49d1d64f", "solve_49d1d64f dsl/solvers.py:280", None),
    ("solve_49d1d64f~1", "solve_49d1d64f dsl/solvers.py:280", "x2 arg 1: ONE -> FOUR, x7 arg 1: x6 -> I, x8: dmirror -> vmirror, x9 arg 1: x8 -> I, x10 arg 1: ONE -> SIX, x14: vconcat -> hconcat, x15 arg 2: x13 -> x11, x18: corners -> backdrop, O: fill -> underfill, O arg 2: ZERO -> SEVEN"),
    ("solve_6f8cd79b", "solve_6f8cd79b dsl/solvers.py:380", None),
    ("solve_017c7c7b", "solve_017c7c7b dsl/solvers.py:394", None),
    ("solve_017c7c7b~1", "solve_017c7c7b dsl/solvers.py:394", "x4: double -> increment, x5: toivec -> tojvec, x5 arg 1: x4 -> x2, x7 arg 2: x5 -> x3, x9 arg 2: x8 -> x5, x10: paint -> underpaint, x11 arg 1: x10 -> x9, x12 arg 2: x7 -> x6, O: replace -> switch, O arg 2: ONE -> x2"),
    ("solve_67385a82", "solve_67385a82 dsl/solvers.py:434", None),
    ("solve_67385a82~1", "solve_67385a82 dsl/solvers.py:434", "x4 arg 1: x2 -> x1, x4 arg 2: x3 -> x1, O arg 2: EIGHT -> ZERO"),
    ("solve_6430c8c4", "solve_6430c8c4 dsl/solvers.py:528", None),
    ("solve_6430c8c4~1", "solve_6430c8c4 dsl/solvers.py:528", "x1: tophalf -> righthalf, x4 arg 1: x2 -> x1, x5: intersection -> difference, O arg 2: THREE -> EIGHT"),
    ("solve_67e8384a", "solve_67e8384a dsl/solvers.py:541", None),
    ("solve_67e8384a~1", "solve_67e8384a dsl/solvers.py:541", "O: vconcat -> hconcat, O arg 2: x3 -> x2"),
    ("solve_746b3537", "solve_746b3537 dsl/solvers.py:550", None),
    ("solve_746b3537~1", "solve_746b3537 dsl/solvers.py:550", "x2 arg 1: x1 -> I, x5 arg 2: T -> F, x6 arg 2: leftmost -> rightmost, x7 arg 1: color -> vperiod, O arg 3: x9 -> I"),
    ("solve_8d5021e8", "solve_8d5021e8 dsl/solvers.py:577", None),
    ("solve_8d5021e8~1", "solve_8d5021e8 dsl/solvers.py:577", "x1: vmirror -> hmirror, x4 arg 2: x2 -> I, O arg 1: x4 -> I"),
    ("solve_a699fb00", "solve_a699fb00 dsl/solvers.py:669", None),
    ("solve_a699fb00~1", "solve_a699fb00 dsl/solvers.py:669", "O arg 3: x4 -> x3"),
    ("solve_d2abd087", "solve_d2abd087 dsl/solvers.py:731", None),
    ("solve_d2abd087~1", "solve_d2abd087 dsl/solvers.py:731", "x2 arg 2: SIX -> FOUR, x4: replace -> switch, x4 arg 2: FIVE -> EIGHT, O: fill -> underfill"),
    ("solve_08ed6ac7", "solve_08ed6ac7 dsl/solvers.py:741", None),
    ("solve_08ed6ac7~1", "solve_08ed6ac7 dsl/solvers.py:741", "x4 arg 2: x3 -> I"),
    ("solve_b27ca6d3", "solve_b27ca6d3 dsl/solvers.py:751", None),
    ("solve_b27ca6d3~1", "solve_b27ca6d3 dsl/solvers.py:751", "x1 arg 4: T -> F, O arg 3: x3 -> x2"),
    ("solve_a87f7484", "solve_a87f7484 dsl/solvers.py:776", None),
    ("solve_a87f7484~1", "solve_a87f7484 dsl/solvers.py:776", "x3 arg 1: x1 -> x2, x8 arg 3: x6 -> I, x12: matcher -> rbind"),
    ("solve_c59eb873", "solve_c59eb873 dsl/solvers.py:803", None),
    ("solve_3af2c5a8", "solve_3af2c5a8 dsl/solvers.py:852", None),
    ("solve_3af2c5a8~1", "solve_3af2c5a8 dsl/solvers.py:852", "x3 arg 1: x2 -> I"),
    ("solve_ac0a08a4", "solve_ac0a08a4 dsl/solvers.py:861", None),
    ("solve_ac0a08a4~1", "solve_ac0a08a4 dsl/solvers.py:861", "x1: numcolors -> palette"),
    ("solve_05f2a901", "solve_05f2a901 dsl/solvers.py:869", None),
    ("solve_05f2a901~1", "solve_05f2a901 dsl/solvers.py:869", "x1 arg 3: F -> T, x3: first -> last"),
    ("solve_aabf363d", "solve_aabf363d dsl/solvers.py:923", None),
    ("solve_aabf363d~1", "solve_aabf363d dsl/solvers.py:923", "x1 arg 2: T -> F"),
    ("solve_810b9b61", "solve_810b9b61 dsl/solvers.py:933", None),
    ("solve_810b9b61~1", "solve_810b9b61 dsl/solvers.py:933", "x1 arg 2: T -> F, x2 arg 2: toindices -> inbox, x2 arg 3: box -> delta, x3 arg 2: size -> x2, x4 arg 3: x3 -> x2, O: fill -> underfill"),
    ("solve_694f12f3", "solve_694f12f3 dsl/solvers.py:944", None),
    ("solve_694f12f3~1", "solve_694f12f3 dsl/solvers.py:944", "x1 arg 2: T -> F, x9: box -> inbox, x10 arg 1: x8 -> x6, x10 arg 2: x9 -> x8"),
    ("solve_ce22a75a", "solve_ce22a75a dsl/solvers.py:961", None),
    ("solve_ce22a75a~1", "solve_ce22a75a dsl/solvers.py:961", "O: fill -> underfill, O arg 2: ONE -> FOUR, O arg 3: x3 -> x1"),
]


def _run(n, S, I, C):
    v3 = _step("vmirror", [I], n)
    v4 = _step("hmirror", [I], n)
    v5 = _step("palette", [I], n)
    v6 = ("one", _dsl.ZERO)
    v7 = _step("remove", [v6, v5], n)
    v8 = _step("first", [v7], n)
    v9 = _step("other", [v7, v8], n)
    v10 = _step("switch", [I, v8, v9], n)
    v11 = _step("first", [I], n)
    v12 = _step("other", [v7, v11], n)
    v13 = _step("switch", [I, v11, v12], n)
    v14 = ("one", _dsl.T)
    v15 = ("one", _dsl.F)
    v16 = _objects_group(I, [0, 1, 3, 4, 5, 7], n)
    v17 = _pick(v16, 3, "objects", [I, v14, v15, v15], n)
    v18 = _step("width", [I], n)
    v19 = ("one", _dsl.width)
    v20 = _step("matcher", [v19, v18], n)
    v21 = ("one", _dsl.hline)
    v22 = _step("sfilter", [v17, v21], n)
    v23 = _step("mfilter", [v22, v20], n)
    v24 = _step("shape", [I], n)
    v25 = _step("canvas", [v6, v24], n)
    v26 = ("one", _dsl.FIVE)
    v27 = _step("fill", [v25, v26, v23], n)
    v28 = _pick(v16, 0, "objects", [I, v15, v15, v15], n)
    v29 = _step("height", [I], n)
    v30 = _step("matcher", [v19, v29], n)
    v31 = _step("sfilter", [v28, v30], n)
    v32 = _step("mfilter", [v31, v30], n)
    v33 = ("one", _dsl.SEVEN)
    v34 = _step("fill", [v25, v33, v32], n)
    v35 = _step("rot180", [I], n)
    v36 = _step("equality", [v3, I], n)
    v37 = ("one", _dsl.ONE)
    v38 = _step("branch", [v36, v37, v33], n)
    v39 = ("one", _dsl.UNITY)
    v40 = _step("canvas", [v38, v39], n)
    v41 = _step("equality", [I, I], n)
    v42 = ("one", _dsl.THREE)
    v43 = _step("branch", [v41, v42, v33], n)
    v44 = _step("canvas", [v43, v39], n)
    v45 = _step("dmirror", [I], n)
    v46 = _step("mostcolor", [I], n)
    v47 = _step("ofcolor", [I, v46], n)
    v48 = _step("asindices", [I], n)
    v49 = _step("difference", [v48, v47], n)
    v50 = _step("fill", [I, v26, v49], n)
    v51 = ("one", _dsl.FOUR)
    v52 = _step("underfill", [I, v51, v49], n)
    v53 = ("one", _dsl.TWO)
    v54 = _step("ofcolor", [I, v53], n)
    v55 = ("one", _dsl.NEG_UNITY)
    v56 = _step("shift", [v54, v55], n)
    v57 = ("one", _dsl.UP_RIGHT)
    v58 = _step("shift", [v54, v57], n)
    v59 = ("one", _dsl.DOWN_LEFT)
    v60 = _step("shift", [v54, v59], n)
    v61 = _step("shift", [v54, v39], n)
    v62 = _step("fill", [v25, v42, v56], n)
    v63 = ("one", _dsl.SIX)
    v64 = _step("fill", [v62, v63, v58], n)
    v65 = ("one", _dsl.EIGHT)
    v66 = _step("fill", [v64, v65, v60], n)
    v67 = _step("fill", [v66, v33, v61], n)
    v68 = _step("canvas", [v65, v24], n)
    v69 = _step("underfill", [v68, v42, v54], n)
    v70 = _step("fill", [v69, v65, v58], n)
    v71 = _step("fill", [v70, v65, v60], n)
    v72 = _step("underfill", [v70, v42, v56], n)
    v73 = _step("hconcat", [I, v3], n)
    v74 = _step("vconcat", [I, v3], n)
    v75 = _step("colorfilter", [v17, v53], n)
    v76 = _step("sizefilter", [v75, v37], n)
    v77 = _step("merge", [v76], n)
    v78 = _step("fill", [I, v37, v77], n)
    v79 = _step("fill", [I, v26, v77], n)
    v80 = _step("ofcolor", [I, v37], n)
    v81 = _step("fill", [I, v6, v80], n)
    v82 = ("one", _dsl.TWO_BY_ZERO)
    v83 = _step("shift", [v80, v82], n)
    v84 = _step("fill", [v81, v37, v83], n)
    v85 = ("one", _dsl.ORIGIN)
    v86 = _step("shift", [v80, v85], n)
    v87 = _step("fill", [I, v37, v86], n)
    v88 = _step("astuple", [v37, v18], n)
    v89 = _step("crop", [I, v85, v88], n)
    v90 = _step("crop", [v4, v85, v88], n)
    v91 = _step("vconcat", [v89, I], n)
    v92 = _step("vconcat", [v91, v90], n)
    v93 = _step("dmirror", [v92], n)
    v94 = _step("width", [v93], n)
    v95 = _step("astuple", [v37, v94], n)
    v96 = _step("crop", [v93, v85, v95], n)
    v97 = _step("hmirror", [v93], n)
    v98 = _step("crop", [v97, v85, v95], n)
    v99 = _step("vconcat", [v96, v93], n)
    v100 = _step("vconcat", [v99, v98], n)
    v101 = _step("dmirror", [v100], n)
    v102 = _step("asindices", [v101], n)
    v103 = _step("corners", [v102], n)
    v104 = _step("fill", [v101, v6, v103], n)
    v105 = _step("astuple", [v51, v18], n)
    v106 = _step("crop", [I, v85, v105], n)
    v107 = _step("crop", [v4, v85, v105], n)
    v108 = _step("vconcat", [v106, I], n)
    v109 = _step("vconcat", [I, v107], n)
    v110 = _step("vmirror", [v109], n)
    v111 = _step("astuple", [v63, v18], n)
    v112 = _step("crop", [v110, v85, v111], n)
    v113 = _step("hmirror", [v110], n)
    v114 = _step("crop", [v113, v85, v111], n)
    v115 = _step("hconcat", [v112, v110], n)
    v116 = _step("vconcat", [v115, v112], n)
    v117 = _step("dmirror", [v116], n)
    v118 = _step("asindices", [v117], n)
    v119 = _step("backdrop", [v118], n)
    v120 = _step("underfill", [v117, v33, v119], n)
    v121 = _step("box", [v48], n)
    v122 = _step("fill", [I, v65, v121], n)
    v123 = _step("asobject", [I], n)
    v124 = _step("vperiod", [v123], n)
    v125 = _step("toivec", [v124], n)
    v126 = _step("double", [v124], n)
    v127 = _step("toivec", [v126], n)
    v128 = _step("shift", [v123, v125], n)
    v129 = _step("shift", [v123, v127], n)
    v130 = ("one", _dsl.NINE)
    v131 = _step("astuple", [v130, v42], n)
    v132 = _step("canvas", [v6, v131], n)
    v133 = _step("paint", [v132, v123], n)
    v134 = _step("paint", [v133, v128], n)
    v135 = _step("paint", [v134, v129], n)
    v136 = _step("replace", [v135, v37, v53], n)
    v137 = _step("increment", [v124], n)
    v138 = _step("tojvec", [v124], n)
    v139 = _step("canvas", [v6, v138], n)
    v140 = _step("underpaint", [v139, v123], n)
    v141 = _step("paint", [v139, v128], n)
    v142 = _step("paint", [v141, v128], n)
    v143 = _step("switch", [v142, v124, v53], n)
    v144 = _step("colorfilter", [v17, v42], n)
    v145 = _step("sizefilter", [v144, v37], n)
    v146 = _step("difference", [v144, v145], n)
    v147 = _step("merge", [v146], n)
    v148 = _step("fill", [I, v65, v147], n)
    v149 = _step("difference", [v17, v17], n)
    v150 = _step("merge", [v149], n)
    v151 = _step("fill", [I, v6, v150], n)
    v152 = _step("tophalf", [I], n)
    v153 = _step("bottomhalf", [I], n)
    v154 = _step("ofcolor", [v152, v6], n)
    v155 = _step("ofcolor", [v153, v6], n)
    v156 = _step("intersection", [v154, v155], n)
    v157 = _step("shape", [v152], n)
    v158 = _step("canvas", [v6, v157], n)
    v159 = _step("fill", [v158, v42, v156], n)
    v160 = _step("righthalf", [I], n)
    v161 = _step("ofcolor", [v160, v6], n)
    v162 = _step("difference", [v161, v161], n)
    v163 = _step("shape", [v160], n)
    v164 = _step("canvas", [v6, v163], n)
    v165 = _step("fill", [v164, v65, v162], n)
    v166 = _step("hmirror", [v73], n)
    v167 = _step("vconcat", [v73, v166], n)
    v168 = _step("hconcat", [v73, v73], n)
    v169 = _step("branch", [v36, v45, I], n)
    v170 = _step("objects", [v169, v14, v15, v15], n)
    v171 = ("one", _dsl.leftmost)
    v172 = _step("order", [v170, v171], n)
    v173 = ("one", _dsl.color)
    v174 = _step("apply", [v173, v172], n)
    v175 = _step("initset", [v174], n)
    v176 = _step("totuple", [v175], n)
    v177 = _step("dmirror", [v176], n)
    v178 = _step("branch", [v36, v177, v176], n)
    v179 = _step("branch", [v41, v45, I], n)
    v180 = _step("objects", [v179, v15, v15, v15], n)
    v181 = ("one", _dsl.rightmost)
    v182 = _step("order", [v180, v181], n)
    v183 = ("one", _dsl.vperiod)
    v184 = _step("apply", [v183, v182], n)
    v185 = _step("initset", [v184], n)
    v186 = _step("totuple", [v185], n)
    v187 = _step("dmirror", [v186], n)
    v188 = _step("branch", [v41, v187, I], n)
    v189 = _step("hconcat", [v3, I], n)
    v190 = _step("hmirror", [v189], n)
    v191 = _step("vconcat", [v190, v189], n)
    v192 = _step("vconcat", [v191, v190], n)
    v193 = _step("hconcat", [v4, I], n)
    v194 = _step("hmirror", [v193], n)
    v195 = _step("vconcat", [v194, I], n)
    v196 = _step("vconcat", [I, v194], n)
    v197 = ("one", _dsl.RIGHT)
    v198 = _step("shift", [v80, v197], n)
    v199 = ("one", _dsl.LEFT)
    v200 = _step("shift", [v80, v199], n)
    v201 = _step("intersection", [v198, v200], n)
    v202 = _step("fill", [I, v53, v201], n)
    v203 = _step("fill", [I, v53, v200], n)
    v204 = _pick(v16, 4, "objects", [I, v14, v15, v14], n)
    v205 = _step("sizefilter", [v204, v63], n)
    v206 = _step("merge", [v205], n)
    v207 = _step("replace", [I, v26, v37], n)
    v208 = _step("fill", [v207, v53, v206], n)
    v209 = _step("sizefilter", [v204, v51], n)
    v210 = _step("merge", [v209], n)
    v211 = _step("switch", [I, v65, v37], n)
    v212 = _step("underfill", [v211, v53, v210], n)
    v213 = ("one", _dsl.size)
    v214 = _step("order", [v204, v213], n)
    v215 = ("one", _dsl.NEG_ONE)
    v216 = _step("interval", [v51, v6, v215], n)
    v217 = ("one", _dsl.recolor)
    v218 = _step("mpapply", [v217, v216, v214], n)
    v219 = _step("paint", [I, v218], n)
    v220 = _step("mpapply", [v217, I, v214], n)
    v221 = _step("paint", [I, v220], n)
    v222 = _step("sizefilter", [v204, v53], n)
    v223 = ("one", _dsl.outbox)
    v224 = _step("mapply", [v223, v222], n)
    v225 = _step("fill", [I, v42, v224], n)
    v226 = _step("sizefilter", [v17, v53], n)
    v227 = _step("mapply", [v223, v226], n)
    v228 = _step("fill", [I, v42, v226], n)
    v229 = _step("divide", [v29, v42], n)
    v230 = _step("divide", [v18, v42], n)
    v231 = _step("vsplit", [I, v229], n)
    v232 = _step("hsplit", [I, v230], n)
    v233 = _step("portrait", [I], n)
    v234 = _step("branch", [v233, v231, v232], n)
    v235 = ("one", _dsl.ofcolor)
    v236 = _step("rbind", [v235, v6], n)
    v237 = _step("apply", [v236, v234], n)
    v238 = _step("leastcommon", [v237], n)
    v239 = _step("matcher", [v236, v238], n)
    v240 = _step("extract", [v234, v239], n)
    v241 = _step("vsplit", [I, v230], n)
    v242 = _step("branch", [v233, v241, I], n)
    v243 = _step("apply", [v236, v242], n)
    v244 = _step("leastcommon", [v243], n)
    v245 = _step("rbind", [v236, v244], n)
    v246 = _step("extract", [v242, v245], n)
    v247 = _step("upscale", [I, v53], n)
    v248 = _step("vconcat", [v73, v4], n)
    v249 = _step("numcolors", [I], n)
    v250 = _step("decrement", [v249], n)
    v251 = _step("upscale", [I, v250], n)
    v252 = _step("decrement", [v5], n)
    v253 = _step("upscale", [I, v252], n)
    v254 = _step("colorfilter", [v204, v53], n)
    v255 = _step("first", [v254], n)
    v256 = _step("colorfilter", [v204, v65], n)
    v257 = _step("first", [v256], n)
    v258 = _step("gravitate", [v255, v257], n)
    v259 = _step("move", [I, v255, v258], n)
    v260 = _pick(v16, 5, "objects", [I, v14, v14, v14], n)
    v261 = _step("colorfilter", [v260, v53], n)
    v262 = _step("last", [v261], n)
    v263 = _step("colorfilter", [v260, v65], n)
    v264 = _step("first", [v263], n)
    v265 = _step("gravitate", [v262, v264], n)
    v266 = _step("move", [I, v262, v265], n)
    v267 = _step("argmax", [v204, v213], n)
    v268 = _step("leastcolor", [I], n)
    v269 = _step("replace", [I, v268, v6], n)
    v270 = _step("fill", [v269, v268, v267], n)
    v271 = _pick(v16, 1, "objects", [I, v15, v15, v14], n)
    v272 = _step("argmax", [v271, v213], n)
    v273 = _step("fill", [v269, v268, v272], n)
    v274 = ("one", _dsl.equality)
    v275 = ("one", _dsl.toindices)
    v276 = ("one", _dsl.box)
    v277 = _step("fork", [v274, v275, v276], n)
    v278 = ("one", _dsl.positive)
    v279 = ("one", _dsl.delta)
    v280 = _step("chain", [v278, v213, v279], n)
    v281 = ("one", _dsl.both)
    v282 = _step("fork", [v281, v277, v280], n)
    v283 = _step("mfilter", [v260, v282], n)
    v284 = _step("fill", [I, v42, v283], n)
    v285 = _pick(v16, 2, "objects", [I, v15, v14, v14], n)
    v286 = ("one", _dsl.inbox)
    v287 = _step("fork", [v274, v286, v279], n)
    v288 = _step("chain", [v278, v287, v279], n)
    v289 = _step("fork", [v281, v287, v287], n)
    v290 = _step("mfilter", [v285, v289], n)
    v291 = _step("underfill", [I, v42, v290], n)
    v292 = _step("colorfilter", [v17, v51], n)
    v293 = _step("argmax", [v292, v213], n)
    v294 = _step("argmin", [v292, v213], n)
    v295 = _step("backdrop", [v293], n)
    v296 = _step("box", [v293], n)
    v297 = _step("difference", [v295, v296], n)
    v298 = _step("backdrop", [v294], n)
    v299 = _step("box", [v294], n)
    v300 = _step("difference", [v298, v299], n)
    v301 = _step("fill", [I, v53, v297], n)
    v302 = _step("fill", [v301, v37, v300], n)
    v303 = _step("colorfilter", [v28, v51], n)
    v304 = _step("argmax", [v303, v213], n)
    v305 = _step("argmin", [v303, v213], n)
    v306 = _step("backdrop", [v304], n)
    v307 = _step("box", [v304], n)
    v308 = _step("difference", [v306, v307], n)
    v309 = _step("backdrop", [v305], n)
    v310 = _step("inbox", [v305], n)
    v311 = _step("difference", [v307, v309], n)
    v312 = _step("fill", [I, v53, v308], n)
    v313 = _step("fill", [v312, v37, v311], n)
    v314 = _step("ofcolor", [I, v26], n)
    v315 = ("one", _dsl.neighbors)
    v316 = _step("mapply", [v315, v314], n)
    v317 = _step("combine", [v314, v316], n)
    v318 = _step("fill", [I, v37, v317], n)
    v319 = _step("underfill", [I, v51, v314], n)
    return {
        "solve_demo_mirror": (v3, []),
        "solve_demo_mirror~1": (v4, []),
        "solve_demo_swap_colors": (v10, []),
        "solve_demo_swap_colors~1": (v13, []),
        "solve_25d8a9c8": (v27, []),
        "solve_25d8a9c8~1": (v34, []),
        "solve_3c9b0459": (v35, []),
        "solve_44f52bb0": (v40, []),
        "solve_44f52bb0~1": (v44, [v3]),
        "solve_74dd1130": (v45, []),
        "solve_9565186b": (v50, []),
        "solve_9565186b~1": (v52, []),
        "solve_a9f96cdd": (v67, []),
        "solve_a9f96cdd~1": (v72, [v56, v60, v71]),
        "solve_c9e6f938": (v73, []),
        "solve_c9e6f938~1": (v74, []),
        "solve_aedd82e4": (v78, []),
        "solve_aedd82e4~1": (v79, []),
        "solve_3618c87e": (v84, []),
        "solve_3618c87e~1": (v87, [v81]),
        "solve_49d1d64f": (v104, []),
        "solve_49d1d64f~1": (v120, [v106, v108, v113, v114]),
        "solve_6f8cd79b": (v122, []),
        "solve_017c7c7b": (v136, []),
        "solve_017c7c7b~1": (v143, [v137, v128, v131, v140]),
        "solve_67385a82": (v148, []),
        "solve_67385a82~1": (v151, [v144, v145]),
        "solve_6430c8c4": (v159, []),
        "solve_6430c8c4~1": (v165, [v153]),
        "solve_67e8384a": (v167, []),
        "solve_67e8384a~1": (v168, [v166]),
        "solve_746b3537": (v178, []),
        "solve_746b3537~1": (v188, [v3]),
        "solve_8d5021e8": (v192, []),
        "solve_8d5021e8~1": (v196, [v195]),
        "solve_a699fb00": (v202, []),
        "solve_a699fb00~1": (v203, [v198, v201]),
        "solve_d2abd087": (v208, []),
        "solve_d2abd087~1": (v212, []),
        "solve_08ed6ac7": (v219, []),
        "solve_08ed6ac7~1": (v221, [v216]),
        "solve_b27ca6d3": (v225, []),
        "solve_b27ca6d3~1": (v228, [v227]),
        "solve_a87f7484": (v240, []),
        "solve_a87f7484~1": (v246, [v29, v230, v232]),
        "solve_c59eb873": (v247, []),
        "solve_3af2c5a8": (v167, []),
        "solve_3af2c5a8~1": (v248, []),
        "solve_ac0a08a4": (v251, []),
        "solve_ac0a08a4~1": (v253, []),
        "solve_05f2a901": (v259, []),
        "solve_05f2a901~1": (v266, []),
        "solve_aabf363d": (v270, []),
        "solve_aabf363d~1": (v273, []),
        "solve_810b9b61": (v284, []),
        "solve_810b9b61~1": (v291, [v288]),
        "solve_694f12f3": (v302, []),
        "solve_694f12f3~1": (v313, [v310]),
        "solve_ce22a75a": (v318, []),
        "solve_ce22a75a~1": (v319, [v316, v317]),
    }
