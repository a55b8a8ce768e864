"""``synth run --engine jax``: in process, in a fresh ``synth`` that sets up its own host devices, and in the
fallback to a fresh process when JAX already started with too few; flags, errors and wrong results."""

import json
import os
import subprocess
import sys

import pytest

from synth.cli import main
from synth.runtime.jax.devices import requested_host_devices

if requested_host_devices(os.environ) < 64:  # before JAX is imported anywhere in this process (test_jax_exec.py)
    os.environ["JAX_NUM_CPU_DEVICES"] = "64"

pytest.importorskip("jax")

#: the environment of a process that asks JAX for no host devices: synth must ask for them itself
BARE_ENV = {k: v for k, v in os.environ.items() if k not in ("JAX_NUM_CPU_DEVICES", "XLA_FLAGS", "JAX_PLATFORMS")}


@pytest.fixture(scope="module")
def sp44(tmp_path_factory):
    path = tmp_path_factory.mktemp("jax-cli") / "sp-4x4.json"
    assert main(["solve", "--torus", "4x4", "--out", str(path)]) == 0
    return str(path)


def _synth(args, env=BARE_ENV):
    return subprocess.run([sys.executable, "-m", "synth", *args], capture_output=True, text=True, env=env,
                          timeout=600)


def test_in_process_json(sp44, capsys):
    assert main(["run", sp44, "--engine", "jax", "--size", "4KiB", "--iters", "2", "--dtype", "int32", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["ok"] and rep["engine"] == "jax" and rep["devices"] == 16 and rep["platform"] == "cpu"
    assert rep["elements"] == 1024 and len(rep["schedule_s"]) == len(rep["psum_s"]) == 2
    assert rep["permutations"] == 32 and rep["check"] == "bit-exact" and rep["compile_s"] > 0


def test_a_fresh_process_sets_up_its_own_host_devices_then_falls_back_to_a_fresh_one(sp44, tmp_path):
    """In a Python whose environment asks for no host devices: ``synth run`` (its entry point, before anything
    started JAX) asks for the 3 devices of a ring itself and runs in process; then a 16-device schedule, with
    JAX running on 3, goes to a fresh process."""
    ring = tmp_path / "ring-3.jsonl"
    assert main(["baseline", "ring", "--torus", "3", "--out", str(ring)]) == 0
    code = ("import json, sys; from synth.cli import main; "
            f"rc = main(['run', {str(ring)!r}, '--engine', 'jax', '--size', '64', '--iters', '1']); "
            "import jax; assert len(jax.devices()) == 3; "
            "from synth.runtime.jax import run_jax; "
            f"r = run_jax({sp44!r}, size=256, iters=1, dtype='bfloat16'); print(json.dumps(r.to_json())); "
            "sys.exit(rc)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=BARE_ENV, timeout=600)
    assert r.returncode == 0, r.stderr
    first, second = r.stdout.strip().splitlines()[0], r.stdout.strip().splitlines()[-1]
    assert "ring-3.jsonl: OK on 3 cpu devices (in process, emulated host devices)" in first, first
    rep = json.loads(second)
    assert rep["ok"] and rep["devices"] == 16 and rep["where"].startswith("a fresh process")
    assert rep["dtype"] == "bfloat16" and rep["elements"] == 128


def test_the_file_the_cli_ran_runs_in_user_jit(sp44, capsys):
    """The same certificate: from ``synth run`` (above) and through psum_fn in the user's own jit."""
    import jax
    import numpy as np

    from synth.runtime.jax import psum_fn
    from synth.runtime.jax.devices import host_devices

    devices = host_devices(16)
    assert devices is not None, "JAX started in this process with fewer than 16 host devices"
    mesh = jax.sharding.Mesh(np.array(devices[:16]), ("i",))
    ours, ref = (jax.jit(jax.shard_map(f, mesh=mesh, in_specs=jax.P("i"), out_specs=jax.P("i")))
                 for f in (psum_fn(sp44, "i"), lambda v: jax.lax.psum(v, "i")))
    x = np.random.default_rng(5).integers(-2**31, 2**31, size=(16, 77), dtype=np.int64).astype(np.int32)
    got = np.asarray(ours(x))
    assert np.array_equal(got, np.asarray(ref(x)))
    assert np.array_equal(got, np.broadcast_to(x.sum(axis=0, dtype=np.int32), x.shape))


def test_a_wrong_schedule_exits_1(sp44, tmp_path, capsys):
    explicit = tmp_path / "sp.jsonl"
    assert main(["export", sp44, "--format", "explicit", "--out", str(explicit)]) == 0
    lines = explicit.read_text().splitlines()
    explicit.write_text("\n".join(lines[:5] + lines[6:]) + "\n")  # one transmission lost
    capsys.readouterr()
    assert main(["run", str(explicit), "--engine", "jax", "--size", "1KiB", "--iters", "1", "--dtype", "int64"]) == 1
    out = capsys.readouterr().out
    assert "WRONG RESULT" in out and "differ from the exact sum" in out and "differ from psum" in out


@pytest.fixture(scope="module")
def halves33(tmp_path_factory):
    d = tmp_path_factory.mktemp("jax-cli-halves")
    out = {}
    for c in ("reduce-scatter", "allgather"):
        out[c] = str(d / f"{c}-3x3.json")
        assert main(["solve", "--torus", "3x3", "--collective", c, "--out", out[c]]) == 0
    return out


def test_reduce_scatter_and_allgather_run_and_report_like_allreduce(halves33, capsys):
    """9 devices: the size rounds down to p blocks (1 KiB of int32: 252 elements, 28 per device's block)."""
    capsys.readouterr()
    assert main(["run", halves33["reduce-scatter"], "--engine", "jax", "--size", "1KiB", "--iters", "2", "--dtype",
                 "int32", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["ok"] and rep["collective"] == "reduce-scatter" and rep["reference"] == "jax.lax.psum_scatter"
    assert rep["devices"] == 9 and rep["elements"] == 252 and rep["rounds"] == 2 and rep["check"] == "bit-exact"
    assert len(rep["schedule_s"]) == len(rep["psum_s"]) == 2 and rep["compile_s"] > 0
    assert main(["run", halves33["allgather"], "--engine", "jax", "--size", "1KiB", "--iters", "1"]) == 0
    out = capsys.readouterr().out
    assert "OK on 9 cpu devices" in out and "allgather: 2 rounds" in out and "all_gather " in out
    assert "against the exact gathered blocks (bit-exact) and all_gather: all equal" in out


def test_a_wrong_reduce_scatter_exits_1(halves33, tmp_path, capsys):
    explicit = tmp_path / "rs.jsonl"
    assert main(["export", halves33["reduce-scatter"], "--format", "explicit", "--out", str(explicit)]) == 0
    lines = explicit.read_text().splitlines()
    assert '"op":"reduce"' in lines[1]
    lines[1] = lines[1].replace('"op":"reduce"', '"op":"copy"')  # the receiver loses its own input of a chunk
    explicit.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert main(["run", str(explicit), "--engine", "jax", "--size", "1KiB", "--iters", "1", "--dtype", "int64"]) == 1
    out = capsys.readouterr().out
    assert "WRONG RESULT" in out and "differ from the exact sum of each device's block" in out
    assert "differ from psum_scatter's result" in out
    assert main(["run", halves33["allgather"], "--engine", "jax", "--size", "32"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["synth: error: --size must hold at least 9 float32 elements: the allgather cuts the vector into 9 "
                   "equal blocks"], err


@pytest.mark.parametrize("args, message", [
    (["--engine", "jax", "--mode", "deps"], "argument --mode: only with --engine mpi"),
    (["--engine", "jax", "--mpiexec", "mpirun"], "argument --mpiexec: only with --engine mpi"),
    (["--engine", "jax", "--workdir", "w"], "argument --workdir: only with --engine mpi"),
    (["--dtype", "bfloat16"], "argument --dtype: 'bfloat16' needs --engine jax"),
    (["--platform", "cpu"], "argument --platform: only with --engine jax"),
    (["--engine", "jax", "--size", "1"], "--size must hold at least one float32 element"),
    (["--engine", "tpu"], "invalid choice: 'tpu'"),
    (["--engine", "jax", "--size", "1024TiB"], "--size 1,125,899,906,842,624 bytes per device needs about"),
    (["--engine", "jax", "--platform", "tpu"], "JAX platform 'tpu':"),
])
def test_bad_flags_are_one_line_errors(sp44, capsys, args, message):
    assert main(["run", sp44, *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("synth: error:") and message in err[0], err


def test_without_jax_the_error_names_the_extra(sp44, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "jax", None)  # `import jax` now raises ImportError
    assert main(["run", sp44, "--engine", "jax", "--size", "1KiB"]) == 2
    assert "jax is not installed; install the JAX extra: pip install -e '.[jax]'" in capsys.readouterr().err


def test_importing_synth_loads_no_jax():
    code = ("import sys, synth, synth.cli, synth.runtime.jax, synth.runtime.jax.run, synth.runtime.jax.devices; "
            "print(sorted(m for m in sys.modules if m == 'jax' or m.startswith('jax.')))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]"
