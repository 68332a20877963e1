"""New request ids: well formed, unique within a process, and not repeated by a forked worker."""

import multiprocessing
import re

from dps_common import request_id


def test_new_ids_are_32_hex_digits_and_unique():
    ids = [request_id.new() for _ in range(10_000)]
    assert all(re.fullmatch(r"[0-9a-f]{32}", id_) and request_id.valid(id_) for id_ in ids)
    assert len(set(ids)) == len(ids)


def _child_ids(queue: "multiprocessing.Queue[list[str]]") -> None:
    queue.put([request_id.new() for _ in range(3)])


def test_a_forked_child_draws_its_own_ids():
    # gunicorn forks its workers from a master that may have made ids: none may be made twice
    parent = [request_id.new() for _ in range(3)]
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    children = [context.Process(target=_child_ids, args=(queue,)) for _ in range(2)]
    for child in children:
        child.start()
    made = [queue.get(timeout=30) for _ in children]
    for child in children:
        child.join(timeout=30)
    prefixes = {id_[:16] for id_ in parent + made[0] + made[1]}
    assert len(prefixes) == 3
    assert len(set(parent + made[0] + made[1])) == 9
