"""mx.name: NameManager and Prefix give MXNet's names (hint + per-manager counter)."""

import threading

import sparsegen as mx


def test_names_count_per_hint_and_per_manager():
    with mx.name.NameManager() as outer:
        assert [outer.get(None, "dot") for _ in range(3)] == ["dot0", "dot1", "dot2"]
        assert outer.get(None, "fc") == "fc0" and outer.get("mine", "fc") == "mine"
        with mx.name.NameManager() as inner:
            assert mx.name.NameManager.current() is inner and inner.get(None, "dot") == "dot0"
        assert mx.name.NameManager.current() is outer and outer.get(None, "dot") == "dot3"


def test_prefix_prefixes_given_and_generated_names():
    with mx.name.Prefix("enc_") as prefix:
        assert prefix.get(None, "fc") == "enc_fc0" and prefix.get("w", "fc") == "enc_w"


def test_each_thread_has_its_own_current_manager():
    seen = []
    with mx.name.NameManager() as mine:
        worker = threading.Thread(target=lambda: seen.append(mx.name.NameManager.current()))
        worker.start()
        worker.join()
        assert seen[0] is not mine and mx.name.NameManager.current() is mine
