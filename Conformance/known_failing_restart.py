"""KNOWN TO FAIL about one run in six (issue 21, open): after `pg_ctl restart -m immediate`
under load, one instance sometimes stops acknowledging writes for more than 30 s and does not
stop on SIGTERM within 30 s. Kept out of `swift test` until that is fixed; run it by hand:
  CONFORMANCE_POSTGRES=... CONFORMANCE_PG_RESTART="dev/throwaway-postgres.sh restart DIR" \
    .build/conformance-venv/bin/python -m pytest -q Conformance/known_failing_restart.py
(The file name keeps pytest from collecting it with the rest of the suite.)"""
import os
import subprocess
import threading
import time

from test_instances import create_fleet, drive, pair, stored_step  # noqa: F401 (pair is a fixture)

RESTART = os.environ["CONFORMANCE_PG_RESTART"]


def test_postgresql_restarted_under_load_loses_no_acknowledged_write(pair):
    _, vehicles_a = pair.client(0)
    _, vehicles_b = pair.client(1)
    md = pair.md()
    ids = create_fleet(vehicles_a, md, 6)
    stop, acknowledged, errors = threading.Event(), {}, []
    writers = [threading.Thread(target=drive, args=(client, md, ids[i::2], stop, acknowledged, errors))
               for i, client in enumerate([vehicles_a, vehicles_b])]
    for w in writers:
        w.start()
    time.sleep(1.5)
    subprocess.run(RESTART, shell=True, check=True, capture_output=True)
    # Both instances recover by themselves: writes are acknowledged again.
    before = dict(acknowledged)
    deadline = time.time() + 30
    while time.time() < deadline and not all(acknowledged.get(v, 0) > before.get(v, 0) for v in ids):
        time.sleep(0.2)
    stop.set()
    for w in writers:
        w.join()
    assert all(acknowledged.get(v, 0) > before.get(v, 0) for v in ids), "writes did not recover"
    assert errors, "the restart did not interrupt the load"
    for client in (vehicles_a, vehicles_b):
        for vid, step in acknowledged.items():
            assert stored_step(client, md, vid) >= step, vid
