"""The fresh process of :func:`synth.runtime.jax.run.run_jax`: ``python -m synth.runtime.jax._worker DIR``.

``DIR`` holds ``tables.pickle`` (the :class:`~synth.runtime.jax.tables.JaxTables`, written by the
parent a moment before) and ``args.json``; the environment asks for ``p`` host devices
(``JAX_NUM_CPU_DEVICES``), set before JAX starts.  The measured fields go to ``DIR/result.json``.
"""

from __future__ import annotations

import json
import os
import pickle
import sys

from synth.runtime.jax.devices import host_devices
from synth.runtime.jax.run import device_order, execute_tables


def main(directory: str) -> int:
    with open(os.path.join(directory, "tables.pickle"), "rb") as f:
        tables = pickle.load(f)  # written by our parent process for this run
    with open(os.path.join(directory, "args.json"), encoding="utf-8") as f:
        args = json.load(f)
    devices = host_devices(tables.n_devices)
    if devices is None:
        print(f"synth: error: JAX has fewer than {tables.n_devices} host devices in the fresh process", file=sys.stderr)
        return 2
    devices, order = device_order(devices, None, tables.n_devices)
    res = execute_tables(tables, devices, args["elements"], args["dtype"], args["iters"], args["warmup"], args["seed"])
    res["order"] = order
    with open(os.path.join(directory, "result.json"), "w", encoding="utf-8") as f:
        json.dump(res, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
