"""The disk cache of long prompts' KV-cache states: which entry a prompt starts from, which prompts are kept, the
least recently used dropped, and files that are not entries left alone."""
import os

import numpy as np

from relmem.llm.prompt_cache import ENTRIES, MIN_SHARED, MIN_TOKENS, PromptCache


def prompt(prefix_seed, length, tail_seed=None):
    rng = np.random.default_rng(prefix_seed)
    tokens = rng.integers(0, 150_000, size=length, dtype=np.int32)
    if tail_seed is not None:
        tokens[-20:] = np.random.default_rng(tail_seed).integers(0, 150_000, size=20, dtype=np.int32)
    return tokens


def test_a_long_prompt_is_kept_and_found_by_a_prompt_sharing_its_prefix(tmp_path):
    cache = PromptCache.for_model(str(tmp_path), "model.gguf", 123, 1.0, 4096, "0.3")
    first = prompt(1, 3000, tail_seed=10)
    assert cache.store(first, b"state-bytes", 2980)
    name, shared, kept = cache.best(prompt(1, 3000, tail_seed=11))
    assert shared == 2980 and np.array_equal(kept, first)
    assert cache.load(name) == b"state-bytes"
    assert cache.best(prompt(2, 3000)) is None
    assert PromptCache.for_model(str(tmp_path), "model.gguf", 123, 1.0, 8192, "0.3").best(first) is None


def test_prompts_without_a_long_recurring_prefix_and_of_a_kept_family_are_not_stored(tmp_path):
    cache = PromptCache(str(tmp_path / "c"))
    assert not cache.store(prompt(1, 3000), b"x", MIN_TOKENS - 1)  # one question's own long prompt
    assert cache.store(prompt(1, 2000, tail_seed=1), b"x", 1980)
    assert not cache.store(prompt(1, 2000, tail_seed=2), b"y", 1980)
    assert cache.stored == 1 and len(os.listdir(tmp_path / "c")) == 2


def test_a_prompt_sharing_too_little_starts_from_nothing(tmp_path):
    cache = PromptCache(str(tmp_path))
    kept = prompt(1, 2000)
    cache.store(kept, b"x", 2000)
    other = prompt(2, 2000)
    other[:MIN_SHARED - 1] = kept[:MIN_SHARED - 1]
    assert cache.best(other) is None


def test_the_least_recently_used_entries_go_beyond_the_limit(tmp_path):
    cache = PromptCache(str(tmp_path))
    prompts = [prompt(seed, 1500) for seed in range(ENTRIES + 2)]
    for age, tokens in enumerate(prompts):
        assert cache.store(tokens, b"s%d" % age, 1500)
        for name in os.listdir(tmp_path):
            if name.endswith(".state"):
                path = tmp_path / name
                os.utime(path, (os.path.getmtime(path) - 10, os.path.getmtime(path) - 10))
    assert len([n for n in os.listdir(tmp_path) if n.endswith(".state")]) == ENTRIES
    assert cache.best(prompts[0]) is None and cache.best(prompts[1]) is None
    assert cache.best(prompts[-1])[1] == 1500


def test_an_entry_whose_family_recurs_stays_while_newer_ones_come(tmp_path):
    cache = PromptCache(str(tmp_path))
    overview = prompt(0, 3000, tail_seed=1)
    cache.store(overview, b"overview", 2980)
    for seed in range(1, ENTRIES + 3):
        for name in os.listdir(tmp_path):
            path = tmp_path / name
            os.utime(path, (os.path.getmtime(path) - 10, os.path.getmtime(path) - 10))
        cache.store(prompt(0, 3000, tail_seed=100 + seed), b"again", 2980)  # the next question's overview prompt
        cache.store(prompt(seed, 1500), b"plan", 1500)
    assert cache.best(prompt(0, 3000, tail_seed=99))[1] == 2980


def test_files_that_are_not_entries_are_skipped_and_kept(tmp_path):
    cache = PromptCache(str(tmp_path))
    (tmp_path / "notes.tokens").write_bytes(b"my own file")
    (tmp_path / "half.tokens").write_bytes(b"RMKV1\n" + prompt(1, 2000).tobytes())  # no .state beside it
    assert cache.best(prompt(3, 2000)) is None
    name, _, _ = cache.best(prompt(1, 2000))
    assert cache.load(name) is None
    for seed in range(4, 4 + ENTRIES + 1):
        cache.store(prompt(seed, 1500), b"s", 1500)
    assert (tmp_path / "notes.tokens").read_bytes() == b"my own file"
