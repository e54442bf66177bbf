"""Every function's sample events replayed on moto with IAM enforced, each function under exactly
the policy the CDK app synthesized for its role (tests/infra/replay/). A code path that needs an
action its role lacks is refused there as on AWS, and fails its step here.

Four variants are replayed (replay/coverage.py): the default one (the embedding image, built-in
extraction), prod with a managed domain, SageMaker and LLM extraction (whose key the worker, chat
and fact generation read from Secrets Manager), and the two embedder/extractor pairs between
them. Every other variant the app synthesizes is shown to play against the very same roles,
resource policies and environment as one of them (but what the replay cannot read, each named
with why), so replaying it would play the same calls under the same grants.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from functions.routes import functions
from infra.access import OTHER_FUNCTION_NEEDS
from memory_engine.adapters.aws.dynamodb_store import DynamoDbStore
from memory_engine.adapters.aws.dynamodb_table import DynamoTable
from tests.fakes.aws import moto_aws
from tests.infra import cfn
from tests.infra.replay import scenario
from tests.infra.replay import stack as replay_stack
from tests.infra.replay.coverage import NOT_CODE_CALLS, REPLAYED, SYNTHESIZED, handled, replayed_inputs
from tests.infra.replay.llm import llm_server
from tests.infra.replay.policy import allowed
from tests.infra.replay.scenario import NOT_REPLAYED, STEPS, Outcome, load
from tests.infra.replay.stack import LLM_KEY, Call, ReplayStack
from tests.infra.variants import PROD

# The first test waits for the module's fixture, which replays four variants: about 2.5 minutes
# with one core free, over 5 with both cores busy (the default timeout is 300 s).
pytestmark = pytest.mark.timeout(900)


def replayed_stack(template: dict[str, Any]) -> Iterator[tuple[ReplayStack, list[str | None]]]:
    with llm_server() as (url, keys), ReplayStack.shared_loader(), moto_aws():
        stack = ReplayStack(template, url)
        try:
            stack.create()
            yield stack, keys
        finally:
            stack.close()


@dataclass(frozen=True)
class Replay:
    """One variant replayed: each step's outcome, the LLM's Authorization headers, every
    authorization the functions asked for, and each function's role policy as synthesized."""

    outcomes: list[Outcome]
    keys: list[str | None]
    calls: list[Call]
    policies: dict[str, list[dict[str, Any]]]
    dead_letters: list[dict[str, Any]]


@pytest.fixture(scope="module")
def replays(templates: dict[str, dict[str, Any]]) -> dict[str, Replay]:
    found = {}
    for variant in REPLAYED:
        for stack, keys in replayed_stack(templates[variant]):
            steps = scenario.run(stack)
            policies = {
                folder: stack.statements(cfn.role_of(dict(stack.template), function_id))
                for folder, function_id in stack.functions.items()
            }
            dead = stack.dead_letters()
            found[variant] = Replay(steps, list(keys), list(stack.ledger.calls), policies, dead)
    return found


@pytest.fixture(scope="module")
def outcomes(replays: dict[str, Replay]) -> dict[str, tuple[list[Outcome], list[str | None]]]:
    """Variant → the outcome of every step, and the Authorization headers the LLM endpoint saw."""
    return {variant: (replay.outcomes, replay.keys) for variant, replay in replays.items()}


def _report(outcome: Outcome) -> str:
    refused = "; ".join(f"{call.function} refused {call.authorization}" for call in outcome.denied)
    return f"{outcome.step}: {refused or 'no refusal'}; answered {outcome.detail}"


@pytest.mark.parametrize("variant", REPLAYED)
@pytest.mark.parametrize("position", range(len(STEPS)), ids=[step.name for step in STEPS])
def test_the_step_succeeds_under_the_functions_synthesized_role(
    variant: str, position: int, outcomes: dict[str, tuple[list[Outcome], list[str | None]]]
) -> None:
    outcome = outcomes[variant][0][position]
    assert outcome.succeeded, _report(outcome)


@pytest.mark.parametrize("variant", REPLAYED)
def test_only_the_job_that_fails_every_time_is_parked_in_the_dead_letter_queue(
    variant: str, replays: dict[str, Replay]
) -> None:
    # Given the replay, in which the embedding model fails one session's text every time
    # Then that session's job was retried, then parked with its error; no other job was
    (parked,) = replays[variant].dead_letters
    assert json.loads(parked["Body"])["session_uuid"] == scenario.FAILING_SESSION
    assert "embedding" in parked["MessageAttributes"]["error"]["StringValue"].lower()
    retried = [
        call
        for call in replays[variant].calls
        if call.function == scenario.WORKER and call.authorization.action == "sqs:ChangeMessageVisibility"
    ]
    assert retried


def test_every_function_of_the_stack_is_replayed_but_those_that_call_no_aws_api(
    dev: dict[str, Any],
) -> None:
    # (the embedding image is no zip function: its role writes its logs only)
    replayed = {step.function for step in STEPS}
    deployed = set(cfn.functions_by_folder(dev))
    assert deployed == set(functions()) | set(OTHER_FUNCTION_NEEDS)
    assert deployed - replayed == set(NOT_REPLAYED)


def test_every_sample_event_is_played(dev: dict[str, Any]) -> None:
    played = {step.event for step in STEPS if step.event}
    samples = {path.stem for path in scenario.EVENTS.glob("*.json")}
    assert samples - played == {"embedder_image"}  # the image's sample: no role statement to test


def test_the_llm_key_reaches_the_model_from_secrets_manager(
    outcomes: dict[str, tuple[list[Outcome], list[str | None]]],
) -> None:
    # Given the prod variant, whose functions are told the secret's name, not the key
    _, sent = outcomes[PROD]
    # Then the model was called with the secret's value, read under the functions' roles
    assert sent and set(sent) == {f"Bearer {LLM_KEY}"}


def test_a_code_path_needing_an_action_its_role_lacks_fails_the_replay(
    dev: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the inspector's listing as it was: a Scan of the table, which its role may not do
    def scanned(store: DynamoDbStore, tenant: str, *page: Any) -> list[Any]:
        table: DynamoTable = store.table
        return list(
            table.scan(FilterExpression="sk = :s", ExpressionAttributeValues={":s": {"S": "SESSION"}})
        )

    monkeypatch.setattr(DynamoDbStore, "list_sessions", scanned)
    for stack, _ in replayed_stack(dev):
        # When the inspector's thread list is replayed under its synthesized role
        answer = stack.invoke("inspect_threads", load("inspect_threads"))
        # Then AWS's refusal reaches the caller, and the replay names the missing grant
        assert answer["statusCode"] == 503
        (refused,) = stack.ledger.denied("inspect_threads")
        assert refused.authorization.action == "dynamodb:Scan"
        assert refused.authorization.resource.endswith(":table/memory-engine-replay")


def test_a_send_over_plain_http_is_refused_by_the_queues_tls_only_policy(
    dev: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given requests that say they came over plain HTTP (the role allows the send)
    monkeypatch.setattr(replay_stack, "SECURE_TRANSPORT", "false")
    for stack, _ in replayed_stack(dev):
        # When a consolidate that queues an extraction is replayed
        answer = stack.invoke("consolidate", load("consolidate_force_summary"))
        # Then the queue's resource policy refused the send, and the caller was told
        assert answer["statusCode"] == 503
        refused = [call.authorization.action for call in stack.ledger.denied("consolidate")]
        assert refused == ["sqs:SendMessage"]


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _without(statements: list[dict[str, Any]], position: int, action: str) -> list[dict[str, Any]]:
    """The policy with one action taken out of one statement (the statement gone if it was its
    only action)."""
    changed = []
    for index, statement in enumerate(statements):
        if index == position:
            kept = [granted for granted in _listed(statement["Action"]) if granted != action]
            if not kept:
                continue
            statement = {**statement, "Action": kept}
        changed.append(statement)
    return changed


def unneeded_grants(replay: Replay) -> set[str]:
    """`function: action` for each action of each Allow statement that, taken out, refuses none
    of the authorizations the replay asked for under that role."""
    found = set()
    for folder, statements in replay.policies.items():
        asked = [call.authorization for call in replay.calls if call.function == folder and call.allowed]
        for position, statement in enumerate(statements):
            if statement["Effect"] != "Allow":
                continue
            for action in _listed(statement["Action"]):
                if str(action).startswith(NOT_CODE_CALLS):
                    continue
                dropped = _without(statements, position, action)
                if all(allowed(dropped, request) for request in asked):
                    found.add(f"{folder}: {action}")
    return found


@pytest.mark.parametrize("variant", REPLAYED)
def test_dropping_any_granted_action_refuses_a_replayed_call(
    variant: str, replays: dict[str, Replay]
) -> None:
    # Given every authorization the replay asked for under each function's synthesized role
    # When each granted action is taken out of its statement in turn
    # Then some replayed call is refused without it (else no path needs it: take it out of the
    # role, or replay the path that needs it)
    found = unneeded_grants(replays[variant])
    assert not found, f"granted, but no replayed path needs them: {sorted(found)}"


@pytest.mark.parametrize("variant", sorted(SYNTHESIZED))
def test_every_synthesized_variant_is_replayed_or_plays_against_the_same_as_one_that_is(
    variant: str, templates: dict[str, dict[str, Any]]
) -> None:
    # Given what a replay of the variant would play against: each function's statements and
    # environment, and the resource policies (a kept table read as the table the replay creates)
    wanted = handled(replayed_inputs(templates[variant], SYNTHESIZED[variant]))
    # Then a replayed variant plays against the very same (itself, if it is replayed)
    same = [name for name in REPLAYED if handled(replayed_inputs(templates[name])) == wanted]
    assert same, f"{variant} differs from every replayed variant in what the replay reads: replay it too"
    assert variant not in REPLAYED or same == [variant]


def test_no_two_replayed_variants_play_against_the_same(templates: dict[str, dict[str, Any]]) -> None:
    inputs = [json.dumps(handled(replayed_inputs(templates[name])), sort_keys=True) for name in REPLAYED]
    assert len(set(inputs)) == len(REPLAYED)
