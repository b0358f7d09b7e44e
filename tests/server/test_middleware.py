"""The server's middleware in process: the token buckets of the rate limit (on a clock
of the test's), and the headers every answer gets, whoever made it."""

from __future__ import annotations

from served import Served

from referee.server.middleware import TokenBuckets


def test_a_bucket_gives_its_burst_then_its_rate_per_client() -> None:
    now = [0.0]
    buckets = TokenBuckets(rate=2, burst=3, clock=lambda: now[0])
    assert [buckets.take("a") for _ in range(3)] == [0, 0, 0]
    assert buckets.take("a") == 0.5  # empty: a token comes in 1/rate s
    assert buckets.take("b") == 0  # another client has a bucket of its own
    now[0] += 1.0  # two tokens back
    assert [buckets.take("a") == 0 for _ in range(3)] == [True, True, False]


async def test_every_answer_has_the_headers_and_anonymous_floods_get_429(
        served: Served) -> None:
    for path in ("/api/competition", "/api/nothing", "/finals/report/finals.html"):
        answer = await served.client.get(path)
        assert answer.headers["x-content-type-options"] == "nosniff", path
        assert "content-security-policy" in answer.headers, path
        assert answer.headers["x-frame-options"] == "SAMEORIGIN", path
    mine = await served.client.get("/api/submissions", headers=served.auth("alice"))
    assert mine.status_code == 200 and "referrer-policy" in mine.headers
    statuses = [(await served.client.get("/api/bots")).status_code for _ in range(70)]
    assert statuses.count(429) >= 1  # beyond the default burst of 60
    assert (await served.client.get("/api/submissions", headers=served.auth("alice"))
            ).status_code == 200  # a token's requests are not rate limited
