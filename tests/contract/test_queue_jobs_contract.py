"""The queue carries every kind of job (extraction, chat memory, forget user) and gives each back
as it was sent, in its own message group. Every backend passes these same assertions."""

from __future__ import annotations

from memory_engine.models.messages import ChatMemoryJob, ForgetUserJob, Job
from tests.contract.builders import TENANT, WorkQueue, make_job, receive_one

USER = "7f3c2a9e-4b1d-4c8e-9a6f-2d5e8b1c0f47"


def chat_job(dialog: str = "chat-1") -> ChatMemoryJob:
    return ChatMemoryJob(
        tenant=TENANT,
        userid=USER,
        dialog_uuid=dialog,
        user_messages=["제 강아지 이름은 후추예요.", "My dog is named Pepper."],
        answer="귀여운 이름이네요!",
        language="ko",
    )


def test_each_kind_of_job_comes_back_as_it_was_sent(queue: WorkQueue) -> None:
    sent: list[Job] = [make_job(), chat_job(), ForgetUserJob(tenant=TENANT, userid="someone-else")]
    for job in sent:
        queue.send(job)

    received = queue.receive(10)

    assert sorted((message.job for message in received), key=lambda job: job.kind) == sorted(
        sent, key=lambda job: job.kind
    )


def test_a_users_chat_records_and_forget_share_one_group_in_send_order(queue: WorkQueue) -> None:
    queue.send(chat_job("chat-1"))
    queue.send(chat_job("chat-2"))
    queue.send(ForgetUserJob(tenant=TENANT, userid=USER))

    order = []
    for _ in range(3):
        message = receive_one(queue)
        assert queue.receive(10) == []  # one in flight for the user at a time
        order.append(message.job)
        queue.ack(message.receipt)

    assert order == [chat_job("chat-1"), chat_job("chat-2"), ForgetUserJob(tenant=TENANT, userid=USER)]
