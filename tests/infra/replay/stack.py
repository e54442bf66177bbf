"""A synthesized stack stood up on moto with IAM enforced: each function runs under a role that
holds exactly the statements the CDK app synthesized for its role, rendered with moto's ARNs.

The table, the queues, the embedding function (or SageMaker endpoint) and the LLM key's secret
are created on moto under the names the functions are told in their (rendered) environments.
Every function is invoked through its own `lambda_handler` with the credentials of its role
(assumed with STS on moto); each AWS call it makes is authorized by `policy.evaluate` over the
actions and resources `requests.authorizations` derives, under the role's policies (moto checks
the signature and finds them) and the resource policy the template attaches to that resource
(the queues' TLS-only statements), and recorded in `calls`. A denied call is answered
AccessDenied, as AWS would.

Beyond AWS: the search index is one in-memory index shared by all functions (moto has no
OpenSearch; tests/unit checks the OpenSearch adapter's paths and bodies), the embedding model a
word hash, and the LLM endpoint a local fake server (the only environment value replaced).

Three things make the replay reach the paths a role holds grants for but a short, healthy run
never meets (tests/infra/test_iam_replay.py drops each grant and expects a refusal):
- the index shows writes `SETTLE_SECONDS` late, as Serverless does, on the replay's own clock
  (`later`), so deletes queue their second pass (`usecases.index_purge`) and bank searches read
  young facts from the table; the worker's queue is drained with that clock moved on past each
  retry's wait, never with sleeps;
- every record above `OVERFLOW_BYTES` is stored as a body with overflow parts, as a turn or
  memory of a few hundred kilobytes is on AWS, so writers put parts and readers batch-get them
  (but the records the store never splits, which keep their own bound);
- the embedding model fails any text holding `EMBEDDER_FAILS`, so a job is retried (its message
  hidden for the backoff) and then parked in the dead-letter queue.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any
from unittest import mock

from memory_engine.adapters.aws import clients
from memory_engine.adapters.aws import dynamodb_items as items
from memory_engine.adapters.aws.dynamodb_keys import create_table_request
from memory_engine.adapters.local.memory_index import LocalSearchIndex
from memory_engine.composition import wiring
from memory_engine.engine import Engine
from memory_engine.limits import Limits
from memory_engine.settings import Settings, reset_settings
from memory_engine_app.server.apigw import LocalContext
from memory_engine_app.settling_index import SettlingIndex
from tests.fakes.aws import REGION, create_queue
from tests.fakes.ports import HashEmbedder
from tests.infra import cfn
from tests.infra.replay.policy import Authorization, Principal, evaluate
from tests.infra.replay.requests import Where, authorizations

ACCOUNT = "123456789012"  # moto's default account
TABLE = "memory-engine-replay"
QUEUE = "memory-engine-replay.fifo"
EMBEDDER = "memory-engine-replay-embedder"
LLM_KEY = "sk-replay-llm-key"
TRUST = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}],
}
# As Serverless: a write is searchable this long after it (on the replay's clock).
SETTLE_SECONDS = 30.0
# Records above this are stored with overflow parts of PART_BYTES (on AWS: above 300 KB).
OVERFLOW_BYTES, PART_BYTES, FIRST_CHUNK_BYTES = 256, 128, 16
# What the requests' `aws:SecureTransport` says (a test sets "false" to see the TLS-only
# statements of the queues' policies refuse).
SECURE_TRANSPORT = "true"
# A text the embedding model fails on, every time.
EMBEDDER_FAILS = "[replay: the embedding model fails on this text]"
_PLACEHOLDER = re.compile(r"<([^<>]+)>")
_CLEARED = ("MEMORY_ENGINE_", "OPENAI_", "AWS_", "POWERTOOLS_")


@dataclass(frozen=True)
class Call:
    """One authorization made while a function ran."""

    function: str
    authorization: Authorization
    allowed: bool


@dataclass
class Ledger:
    calls: list[Call] = field(default_factory=list)

    def denied(self, function: str | None = None) -> list[Call]:
        return [c for c in self.calls if not c.allowed and function in (None, c.function)]


def _refuse(request: Any, wanted: Authorization) -> None:
    """AWS's refusal in the service's own protocol: JSON services (SQS too, since botocore speaks
    its JSON protocol) answer AccessDeniedException (moto's default is an XML body those clients
    cannot read, which would reach the caller as a 500)."""
    from moto.core.exceptions import JsonRESTError

    if request._service in {"dynamodb", "secretsmanager", "lambda", "sagemaker", "sqs"}:
        error = JsonRESTError("AccessDeniedException", f"not authorized to perform: {wanted}")
        error.code = 400 if request._service in {"dynamodb", "secretsmanager", "sqs"} else 403
        raise error
    request._raise_access_denied()


@contextmanager
def enforced(
    ledger: Ledger, where: Where, resource_policies: Mapping[str, list[dict[str, Any]]] | None = None
) -> Iterator[None]:
    """IAM on for moto's requests, decided by `policy.evaluate` over each role's inline policies
    and the resource policy of the resource asked for (`resource_policies`, by ARN), for a
    request over TLS (`SECURE_TRANSPORT`: the SDK's endpoints are HTTPS)."""
    from moto.core.authorization import enable_iam_authentication
    from moto.iam.access_control import IAMRequest

    def check_action_permitted(request: Any, resource: str) -> None:
        if request._action == "sts:GetCallerIdentity":
            return
        role = getattr(request._access_key, "_owner_role_name", "(not a role)")
        statements = [
            statement
            for document in request._access_key.collect_policies()
            if isinstance(document, str)
            for statement in json.loads(document)["Statement"]
        ]
        principal = Principal("AWS", where.role_arn(role), where.account)
        for asked in authorizations(request._action, request._body or b"", request._path, where):
            wanted = replace(asked, context={**asked.context, "aws:SecureTransport": [SECURE_TRANSPORT]})
            on_resource = (resource_policies or {}).get(wanted.resource, [])
            verdict = evaluate(statements, on_resource, principal, wanted)
            ledger.calls.append(Call(role, wanted, verdict))
            if not verdict:
                _refuse(request, wanted)

    with (
        mock.patch.object(IAMRequest, "check_action_permitted", check_action_permitted),
        enable_iam_authentication(),
    ):
        yield


def _elsewhere(reference: str) -> str:
    return f"arn:aws:replay:{REGION}:{ACCOUNT}:not-on-moto/{reference.replace('.', '/')}"


class ReplayStack:
    """The template's functions on moto, each under its synthesized role (see the module doc)."""

    def __init__(self, template: Mapping[str, Any], llm_base_url: str) -> None:
        self.template = template
        self.llm_base_url = llm_base_url
        self.ledger = Ledger()
        self.functions = cfn.functions_by_folder(dict(template))
        self.dimension = self._dimension()
        # Seconds the replay's clock is ahead of the system's: moved on by `drain`.
        self.later = 0.0
        self.index = SettlingIndex(
            LocalSearchIndex(), SETTLE_SECONDS, clock=lambda: time.monotonic() + self.later
        )
        self.names: dict[str, str] = {
            "AWS::Partition": "aws",
            "AWS::Region": REGION,
            "AWS::AccountId": ACCOUNT,
            "AWS::URLSuffix": "amazonaws.com",
        }
        self.secrets: dict[str, str] = {}
        self.credentials: dict[str, dict[str, str]] = {}
        self.where = Where(ACCOUNT, REGION, lambda name: self.secrets.get(name, name))

    # -- standing it up (IAM not enforced yet) --------------------------------------------------

    def create(self) -> None:
        """Create the resources the template's functions use, and one role per function."""
        self._table()
        self._queues()
        self._embedder()
        self._secret()
        iam, sts = clients.client("iam", REGION), clients.client("sts", REGION)
        for folder, function_id in sorted(self.functions.items()):
            role = cfn.role_of(dict(self.template), function_id)
            document = {"Version": "2012-10-17", "Statement": self.statements(role)}
            arn = iam.create_role(RoleName=folder, AssumeRolePolicyDocument=json.dumps(TRUST))["Role"]["Arn"]
            iam.put_role_policy(
                RoleName=folder, PolicyName="synthesized", PolicyDocument=json.dumps(document)
            )
            found = sts.assume_role(RoleArn=arn, RoleSessionName=f"replay-{folder}"[:64])["Credentials"]
            self.credentials[folder] = {
                "AWS_ACCESS_KEY_ID": found["AccessKeyId"],
                "AWS_SECRET_ACCESS_KEY": found["SecretAccessKey"],
                "AWS_SESSION_TOKEN": found["SessionToken"],
            }

    def _dimension(self) -> int:
        for function_id in self.functions.values():
            value = cfn.environment(dict(self.template), function_id).get("MEMORY_ENGINE_EMBEDDING_DIMENSION")
            if value:
                return int(value)
        return 384

    def _only(self, kind: str) -> str:
        (logical_id,) = cfn.resources(dict(self.template), kind)
        return logical_id

    def _table(self) -> None:
        clients.client("dynamodb", REGION).create_table(**create_table_request(TABLE))
        table_id = self._only("AWS::DynamoDB::Table")
        self.names |= {table_id: TABLE, f"{table_id}.Arn": self.where.arn("dynamodb", f"table/{TABLE}")}

    def _queues(self) -> None:
        found = cfn.resources(dict(self.template), "AWS::SQS::Queue")
        ((main_id, main),) = [(k, v) for k, v in found.items() if "RedrivePolicy" in v["Properties"]]
        ((dead_id, _),) = [(k, v) for k, v in found.items() if k != main_id]
        url = create_queue(QUEUE, max_receives=main["Properties"]["RedrivePolicy"]["maxReceiveCount"])
        dead = QUEUE.replace(".fifo", "-dlq.fifo")
        self.names |= {
            main_id: url,
            f"{main_id}.Arn": self.where.arn("sqs", QUEUE),
            f"{main_id}.QueueName": QUEUE,
            dead_id: url.replace(QUEUE, dead),
            f"{dead_id}.Arn": self.where.arn("sqs", dead),
            f"{dead_id}.QueueName": dead,
        }

    def _embedder(self) -> None:
        """The embedding function (a word hash behind moto's Lambda or SageMaker runtime)."""
        from moto.awslambda.models import LambdaBackend
        from moto.sagemakerruntime.models import SageMakerRuntimeBackend

        embed = HashEmbedder(self.dimension)

        def answer(body: Any) -> str:
            request = json.loads(body) if isinstance(body, str | bytes) else body
            if any(EMBEDDER_FAILS in text for text in request["texts"]):
                return json.dumps({"embeddings": None, "dimension": self.dimension})
            return json.dumps({"embeddings": embed.embed(request["texts"]), "dimension": self.dimension})

        def invoke(backend: Any, function_name: str, qualifier: Any, body: Any, *rest: Any) -> bytes:
            return answer(body).encode()

        def invoke_endpoint(backend: Any, endpoint_name: str, unique_repr: bytes) -> tuple[str, ...]:
            import base64

            body = json.loads(base64.b64decode(unique_repr))["Body"]
            return answer(body), "application/json", "AllTraffic", ""

        self._patches = [
            mock.patch.object(LambdaBackend, "invoke", invoke),
            mock.patch.object(SageMakerRuntimeBackend, "invoke_endpoint", invoke_endpoint),
            *_overflowing(),
        ]
        for patch in self._patches:
            patch.start()
        images = [
            k
            for k, v in cfn.resources(dict(self.template), "AWS::Lambda::Function").items()
            if v["Properties"].get("PackageType") == "Image"
        ]
        for image_id in images:
            arn = self.where.arn("lambda", f"function:{EMBEDDER}")
            self.names |= {image_id: EMBEDDER, f"{image_id}.Arn": arn}

    def _secret(self) -> None:
        names = {
            str(cfn.environment(dict(self.template), f).get("MEMORY_ENGINE_OPENAI_API_KEY_SECRET", ""))
            for f in self.functions.values()
        } - {""}
        for name in names:
            created = clients.client("secretsmanager", REGION).create_secret(Name=name, SecretString=LLM_KEY)
            self.secrets[name] = created["ARN"]

    @staticmethod
    def shared_loader() -> Any:
        """One botocore data loader for every client the functions build: each function makes its
        own clients (its own credentials), and parsing botocore's JSON models for each would
        take most of the replay's time."""
        import botocore.session
        from botocore.loaders import create_loader

        loader = create_loader()

        def register(session: Any) -> None:
            session._components.lazy_register_component("data_loader", lambda: loader)

        return mock.patch.object(botocore.session.Session, "_register_data_loader", register)

    def close(self) -> None:
        for patch in getattr(self, "_patches", []):
            patch.stop()

    # -- the template, rendered with moto's names ----------------------------------------------

    def rendered(self, value: Any) -> Any:
        """Ref/GetAtt/Join as text, each `<Id>` / `<Id.Attr>` replaced by moto's name or ARN; one
        not on moto (OpenSearch's, the log groups') by an ARN of its own that no call names."""
        text = json.dumps(cfn.render(value))
        return json.loads(
            _PLACEHOLDER.sub(lambda m: self.names.get(m.group(1)) or _elsewhere(m.group(1)), text)
        )

    def resource_policies(self) -> dict[str, list[dict[str, Any]]]:
        """Resource ARN → the statements of the policies the template attaches to it (the queues'
        policies, the topic's, the keys'), rendered with moto's names."""
        found: dict[str, list[dict[str, Any]]] = {}
        template = dict(self.template)
        # A queue's policy names it by its URL (Ref), a topic's by its ARN (Ref).
        for kind, targets, arn_of in (
            ("AWS::SQS::QueuePolicy", "Queues", lambda ref: {"Fn::GetAtt": [ref, "Arn"]}),
            ("AWS::SNS::TopicPolicy", "Topics", lambda ref: {"Ref": ref}),
        ):
            for body in cfn.resources(template, kind).values():
                statements = self.rendered(body["Properties"]["PolicyDocument"]["Statement"])
                for target in body["Properties"][targets]:
                    found.setdefault(str(self.rendered(arn_of(target["Ref"]))), []).extend(statements)
        for key_id, body in cfn.resources(template, "AWS::KMS::Key").items():
            found.setdefault(str(self.rendered({"Fn::GetAtt": [key_id, "Arn"]})), []).extend(
                self.rendered(body["Properties"]["KeyPolicy"]["Statement"])
            )
        return found

    def statements(self, role_id: str) -> list[dict[str, Any]]:
        return [self.rendered(statement) for statement in cfn.statements(dict(self.template), role_id)]

    def environment(self, folder: str) -> dict[str, str]:
        variables = cfn.environment(dict(self.template), self.functions[folder])
        found = {name: str(self.rendered(value)) for name, value in variables.items()}
        found["OPENAI_BASE_URL"] = self.llm_base_url  # the fake LLM server stands in for the model
        return found | self.credentials[folder] | {"AWS_REGION": REGION, "AWS_DEFAULT_REGION": REGION}

    # -- running a function ----------------------------------------------------------------------

    @contextmanager
    def running_as(self, folder: str) -> Iterator[None]:
        """The function's environment and credentials, its engine installed; IAM enforced."""
        with mock.patch.dict(os.environ):
            for name in [name for name in os.environ if name.startswith(_CLEARED)]:
                del os.environ[name]
            os.environ.update(self.environment(folder))
            reset_settings()
            wiring.reset()
            clients.forget_clients()
            try:
                # The engine's functions get a queue; the authorizer the table alone, health nothing.
                if "MEMORY_ENGINE_QUEUE_URL" in os.environ:
                    wiring.use(self._engine(Settings()))
                with enforced(self.ledger, self.where, self.resource_policies()):
                    yield
            finally:
                wiring.reset()
                reset_settings()
                clients.forget_clients()

    def _engine(self, settings: Settings) -> Engine:
        return Engine(
            clock=_Ahead(self),
            limits=Limits.of(settings),
            store=wiring.build_store(settings),
            queue=wiring.build_queue(settings),
            index=self.index,
            embedder=wiring.build_embedder(settings),
            extractor=wiring.build_extractor(settings),
            facts=wiring.build_fact_extractor(settings),
            chat=wiring.build_chat_upstream(settings),
        )

    def invoke(self, folder: str, event: dict[str, Any]) -> dict[str, Any]:
        """The function's `lambda_handler` on `event`, under its role."""
        handler = importlib.import_module(f"functions.{folder}.handler").lambda_handler
        with self.running_as(folder):
            answer: dict[str, Any] = handler(event, LocalContext())
        return answer

    def drain(self, folder: str) -> list[dict[str, Any]]:
        """Deliver the queue's jobs to the worker as its event source mapping does, receiving and
        deleting with the worker's own role (Lambda polls with the function's role); returns the
        worker's answers."""
        from tests.fakes.sqs_lambda import EventSourceMapping

        handler = importlib.import_module(f"functions.{folder}.handler").lambda_handler
        with self.running_as(folder):
            mapping = EventSourceMapping(self.names[self._main_queue_id()], handler, batch_size=1)
            for _ in range(_MAX_POLLS):
                if not mapping.poll():
                    break
                if mapping.responses[-1].get("batchItemFailures"):
                    # A reported retry waits for its backoff, a purge job for the index to
                    # settle: the mapping delivers it again at once, the clock moved past it.
                    self.later += SETTLE_SECONDS
            else:
                raise AssertionError(f"the queue did not drain in {_MAX_POLLS} deliveries")
        return mapping.responses

    def dead_letters(self) -> list[dict[str, Any]]:
        """The messages parked in the dead-letter queue (read, then visible again)."""
        sqs = clients.client("sqs", REGION)
        url = self.names[self._dead_queue_id()]
        found = sqs.receive_message(
            QueueUrl=url, MaxNumberOfMessages=10, MessageAttributeNames=["All"], VisibilityTimeout=0
        ).get("Messages", [])
        return list(found)

    def _dead_queue_id(self) -> str:
        found = cfn.resources(dict(self.template), "AWS::SQS::Queue")
        (dead_id,) = [k for k in found if k != self._main_queue_id()]
        return dead_id

    def _main_queue_id(self) -> str:
        found = cfn.resources(dict(self.template), "AWS::SQS::Queue")
        (main_id,) = [k for k, v in found.items() if "RedrivePolicy" in v["Properties"]]
        return main_id


_MAX_POLLS = 100


class _Ahead:
    """The engine's clock: the system's, `stack.later` seconds ahead."""

    def __init__(self, stack: ReplayStack) -> None:
        self.stack = stack

    def now(self) -> datetime:
        return datetime.now(UTC) + timedelta(seconds=self.stack.later)


# Records the store never splits into parts (a thread's character registry and statements record,
# bounded far below an item by their own limits): packed at their real limit, or a thread with
# one statement would be refused as "over 300 KB" here, and supersession never replayed.
_WHOLE_KINDS = frozenset({"characters", "statements"})


def _overflowing() -> list[Any]:
    """Patches storing every record above OVERFLOW_BYTES as a body with overflow parts (but the
    kinds the store keeps whole, _WHOLE_KINDS)."""
    pack = items.pack

    def small(
        base: items.Item, payload: Mapping[str, str], limit: int = items.INLINE_LIMIT_BYTES, *, parts: int = 0
    ) -> Any:
        if base.get("kind", {}).get("S") in _WHOLE_KINDS:
            return pack(base, payload, limit, parts=parts)
        return pack(base, payload, min(limit, OVERFLOW_BYTES), parts=parts)

    return [
        mock.patch.object(items, "pack", small),
        mock.patch.object(items, "PART_BYTES", PART_BYTES),
        mock.patch.object(items, "_MIN_FIRST_CHUNK", FIRST_CHUNK_BYTES),
    ]
