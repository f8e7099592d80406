"""Executions share nothing that a snippet could use to predict or influence
the next one: random state and uuid4 are fresh in every fork (the fork server's
state is not replayed), in both modes."""

from __future__ import annotations

import pytest

PROBE = {"rp": "import random, uuid, secrets\nresult = [random.random(), random.getrandbits(64), str(uuid.uuid4()), "
               "secrets.token_hex(8)]",
         "norp": "import random, uuid, secrets, os\nresult = [random.random(), random.getrandbits(64), str(uuid.uuid4()), "
                 "secrets.token_hex(8), os.urandom(8).hex()]"}


@pytest.mark.parametrize("mode", ["rp", "norp"])
def test_random_state_is_not_replayed(servers, mode):
    server = servers[mode].ensure()
    seen = []
    for _ in range(3):
        data, _raw, _elapsed = server.call("execute_code", {"code": PROBE[mode], "timeout": 5})
        assert data["success"], data
        seen.append(data["result"])
    for index in range(len(seen[0])):
        values = [row[index] for row in seen]
        assert len(set(map(str, values))) == len(values), f"value {index} repeats across executions: {values}"
