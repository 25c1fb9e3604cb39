"""The `fuel` Python module: runs checked against numpy on random inputs, and
every misuse raising fuel.Error with a message naming the problem.
Run by ctest (`python`) with FUELC set and the module on PYTHONPATH."""
import json
import os
import subprocess
import threading

import numpy as np
import pytest

import fuel

FUELC = os.environ["FUELC"]


def plan(directory, graph, *flags):
    source = directory / (graph["name"] + ".json")
    source.write_text(json.dumps(graph))
    artifact = directory / (graph["name"] + ".fplan")
    subprocess.run([FUELC, "plan", str(source), "-o", str(artifact), *flags], check=True)
    return str(artifact)


def constant(name, array):
    return {"name": name, "dtype": "f32", "shape": list(array.shape),
            "data": [float(v) for v in array.ravel()]}


class Mlp:
    """probs = softmax(relu(x w^T + b)) for x[B, 16], B <= 4, and numpy's."""

    def __init__(self, directory):
        rng = np.random.default_rng(1)
        self.w = rng.standard_normal((8, 16)).astype(np.float32)
        self.b = rng.standard_normal(8).astype(np.float32)
        graph = {
            "format": "fuel.graph", "version": 1, "name": "mlp",
            "inputs": [{"name": "x", "dtype": "f32", "shape": ["B", 16]}],
            "constants": [constant("w", self.w), constant("b", self.b)],
            "nodes": [
                {"id": "h", "op": "linear", "inputs": ["x", "w", "b"]},
                {"id": "a", "op": "relu", "inputs": ["h"]},
                {"id": "probs", "op": "softmax", "inputs": ["a"], "attrs": {"axis": -1}},
            ],
            "outputs": ["probs"],
        }
        self.path = plan(directory, graph, "--dim", "B=4")

    def reference(self, x):
        h = np.maximum(x.astype(np.float64) @ self.w.T + self.b, 0)
        e = np.exp(h - h.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)


@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    return Mlp(tmp_path_factory.mktemp("mlp"))


@pytest.fixture(scope="module")
def integers(tmp_path_factory):
    """y = a * b + a and a > b on int32 [3, 5], and their numpy values."""
    graph = {
        "format": "fuel.graph", "version": 1, "name": "integers",
        "inputs": [{"name": "a", "dtype": "i32", "shape": [3, 5]},
                   {"name": "b", "dtype": "i32", "shape": [3, 5]}],
        "nodes": [
            {"id": "ab", "op": "mul", "inputs": ["a", "b"]},
            {"id": "y", "op": "add", "inputs": ["ab", "a"]},
            {"id": "greater", "op": "gt", "inputs": ["a", "b"]},
        ],
        "outputs": ["y", "greater"],
    }
    return plan(tmp_path_factory.mktemp("integers"), graph)


def random_input(batch, seed):
    return np.random.default_rng(seed).standard_normal((batch, 16)).astype(np.float32)


@pytest.mark.parametrize("batch", [1, 3, 4])
def test_matches_numpy_at_every_batch(mlp, batch):
    session = fuel.Session(mlp.path, threads=1)
    x = random_input(batch, batch)
    probs = session.run({"x": x})["probs"]
    assert probs.dtype == np.float32 and probs.shape == (batch, 8)
    np.testing.assert_allclose(probs, mlp.reference(x), rtol=1e-5, atol=1e-6)


def test_strided_and_list_inputs_give_the_same_result(mlp):
    session = fuel.Session(mlp.path, threads=1)
    x = random_input(3, 7)
    expected = session.run({"x": x})["probs"]
    wide = np.zeros((3, 32), np.float32)
    wide[:, ::2] = x  # Not contiguous: copied once.
    np.testing.assert_array_equal(session.run({"x": wide[:, ::2]})["probs"], expected)
    np.testing.assert_array_equal(session.run({"x": np.asfortranarray(x)})["probs"], expected)
    as_list = x.tolist()  # Python floats are f64: refused, never cast silently.
    with pytest.raises(fuel.Error, match="input 'x' must be f32, got f64"):
        session.run({"x": as_list})


def test_info_describes_the_plan(mlp):
    session = fuel.Session(mlp.path)
    (x,) = session.inputs
    assert (x.name, x.dtype, x.shape, x.dim_symbols) == ("x", "f32", [4, 16], ["B", ""])
    assert repr(x) == "TensorInfo(x: f32[B<=4, 16])"
    assert [o.name for o in session.outputs] == ["probs"]
    assert "route 0 (cpu:0): chosen" in session.route_report


def test_outputs_own_their_memory(mlp):
    session = fuel.Session(mlp.path, threads=1)
    x = random_input(2, 3)
    first = session.run({"x": x})["probs"]
    second = session.run({"x": random_input(2, 4)})["probs"]
    del session
    assert first.flags.writeable and first.flags.c_contiguous
    assert not np.shares_memory(first, second)
    np.testing.assert_allclose(first, mlp.reference(x), rtol=1e-5, atol=1e-6)


def test_integer_and_bool_outputs_are_exact(integers):
    session = fuel.Session(integers)
    rng = np.random.default_rng(5)
    a = rng.integers(-1000, 1000, (3, 5), dtype=np.int32)
    b = rng.integers(-1000, 1000, (3, 5), dtype=np.int32)
    out = session.run({"b": b, "a": a})
    assert list(out) == ["y", "greater"]
    np.testing.assert_array_equal(out["y"], a * b + a)
    assert out["greater"].dtype == np.bool_
    np.testing.assert_array_equal(out["greater"], a > b)


@pytest.mark.parametrize("feeds, message", [
    ({}, "missing input 'x'"),
    ({"x": random_input(2, 1), "y": random_input(2, 1)}, "the plan has no input named 'y'"),
    ({"x": random_input(2, 1).astype(np.float16)}, "input 'x' must be f32, got f16"),
    ({"x": random_input(5, 1)}, "the inputs bind B=5, but the plan's buffers hold B <= 4"),
    ({"x": np.zeros((2, 15), np.float32)}, r"input 'x' must have shape \[B, 16\]"),
    ({"x": np.zeros(16, np.float32)}, r"input 'x' must have shape \[B, 16\]"),
    ({"x": np.array(["text"])}, "numpy dtype <U4 is not one of fuel's element types"),
    ({"x": np.zeros((2, 16), np.complex64)}, "numpy dtype complex64 is not one"),
])
def test_bad_inputs_raise_naming_the_problem(mlp, feeds, message):
    session = fuel.Session(mlp.path, threads=1)
    with pytest.raises(fuel.Error, match=message):
        session.run(feeds)
    x = random_input(2, 9)  # The session still runs afterwards.
    np.testing.assert_allclose(session.run({"x": x})["probs"], mlp.reference(x),
                               rtol=1e-5, atol=1e-6)


def test_bad_artifacts_raise_naming_the_file(mlp, tmp_path):
    with pytest.raises(fuel.Error, match="nope.fplan: error: cannot read artifact"):
        fuel.Session(str(tmp_path / "nope.fplan"))
    data = bytearray(open(mlp.path, "rb").read())
    data[-1] ^= 0xFF
    damaged = tmp_path / "damaged.fplan"
    damaged.write_bytes(bytes(data))
    with pytest.raises(fuel.Error, match="damaged.fplan: error: corrupted artifact"):
        fuel.Session(str(damaged))
    with pytest.raises(fuel.Error, match="the runtime runs at most 1024"):
        fuel.Session(mlp.path, threads=5000)
    with pytest.raises(TypeError):
        fuel.Session(mlp.path, threads=-1)


def test_runs_from_several_threads(mlp):
    session = fuel.Session(mlp.path, threads=1)
    wrong = []

    def worker(seed):
        for i in range(20):
            x = random_input(1 + (seed + i) % 4, seed * 100 + i)
            probs = session.run({"x": x})["probs"]
            if not np.allclose(probs, mlp.reference(x), rtol=1e-5, atol=1e-6):
                wrong.append((seed, i))

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []


def test_profile_names_the_kernels_that_ran(mlp):
    session = fuel.Session(mlp.path, threads=1, profile=True)
    session.run({"x": random_input(2, 2)})
    report = session.profile_report().splitlines()
    assert report[0] == "kernel\tdevice\tcalls\ttotal_ms\tshare"
    assert len(report) > 1 and all("\tcpu:0\t1\t" in line for line in report[1:])
    session.reset_profile()
    assert session.profile_report().splitlines() == report[:1]


def test_choosing_lasts_the_split_trials_with_threads(mlp, tmp_path):
    graph = {"format": "fuel.graph", "version": 1, "name": "wide",
             "inputs": [{"name": "x", "dtype": "f32", "shape": [1024, 256]}],
             "nodes": [{"id": "y", "op": "relu", "inputs": ["x"]}], "outputs": ["y"]}
    path = plan(tmp_path, graph)
    x = {"x": np.random.default_rng(5).standard_normal((1024, 256)).astype(np.float32)}
    single = fuel.Session(path, threads=1)
    single.run(x)
    assert not single.choosing
    session = fuel.Session(path, threads=2)
    session.run(x)
    runs = 0
    while session.choosing and runs < 100:
        session.run(x)
        runs += 1
    # Three trials each of all split, all whole and split per kernel (the
    # first run among them); the last is counted as the next run starts.
    assert runs == 9
    # Kernels too small to split leave nothing to choose.
    small = fuel.Session(mlp.path, threads=2)
    small.run({"x": random_input(2, 2)})
    assert not small.choosing


def test_trace_has_a_run_and_its_kernels(mlp):
    session = fuel.Session(mlp.path, threads=1, trace=True)
    session.run({"x": random_input(2, 2)})
    events = json.loads(session.trace_json())["traceEvents"]
    tracks = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name"}
    assert sorted(tracks.values()) == ["cpu:0", "host"]
    spans = [e for e in events if e["ph"] == "X"]
    assert [e["cat"] for e in spans].count("run") == 1
    assert {tracks[e["tid"]] for e in spans if e["cat"] == "kernel"} == {"cpu:0"}


def test_symbols_set_by_name_must_agree_with_the_inputs(mlp):
    session = fuel.Session(mlp.path, threads=1)
    x = random_input(3, 6)
    np.testing.assert_allclose(session.run({"x": x}, symbols={"B": 3})["probs"],
                               mlp.reference(x), rtol=1e-5, atol=1e-6)
    with pytest.raises(fuel.Error, match="input 'x' binds symbol 'B' to 3, but it is set to 2"):
        session.run({"x": x}, symbols={"B": 2})
    with pytest.raises(fuel.Error, match="the plan has no symbol named 'T' \\(its symbols: B\\)"):
        session.run({"x": x}, symbols={"T": 2})


def test_views_of_inputs_and_outputs_are_numpy_views(tmp_path):
    graph = {
        "format": "fuel.graph", "version": 1, "name": "views",
        "inputs": [{"name": "x", "dtype": "f32", "shape": [4, 6]}],
        "nodes": [
            {"id": "r", "op": "relu", "inputs": ["x"]},
            {"id": "t", "op": "transpose", "inputs": ["r"]},
            {"id": "f", "op": "reshape", "inputs": ["x"], "attrs": {"shape": [3, 8]}},
        ],
        "outputs": ["t", "r", "f", "x"],
    }
    session = fuel.Session(plan(tmp_path, graph))
    x = np.random.default_rng(6).standard_normal((4, 6)).astype(np.float32)
    viewed = session.run({"x": x}, views=True)
    np.testing.assert_array_equal(viewed["r"], np.maximum(x, 0))
    np.testing.assert_array_equal(viewed["t"], np.maximum(x, 0).T)
    np.testing.assert_array_equal(viewed["f"], x.reshape(3, 8))
    # No copies: t shares r's memory, f and x the input's.
    assert np.shares_memory(viewed["t"], viewed["r"])
    assert np.shares_memory(viewed["f"], x) and np.shares_memory(viewed["x"], x)
    # Without views, each output is an array of its own, with the same values.
    copied = session.run({"x": x})
    assert not np.shares_memory(copied["f"], x)
    for name in ("t", "r", "f", "x"):
        np.testing.assert_array_equal(copied[name], viewed[name])
