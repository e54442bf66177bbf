"""The use cases' one compare-and-set loop (`usecases.compare_and_set`): a round that wins is the
answer, a lost one is tried again over the record read again, and after MAX_ATTEMPTS lost rounds
the caller's `gave_up` decides (raise, or go on). Driven over a small versioned record whose rival
writer is forced in just before a given number of writes, not timed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from memory_engine.errors import Conflict
from memory_engine.models.domain import Memory
from memory_engine.usecases.compare_and_set import MAX_ATTEMPTS, Lost, compare_and_set, read_again
from tests.contract.builders import make_memory
from tests.fakes.engine import fake_engine


@dataclass(frozen=True)
class Read:
    value: str
    version: int


@dataclass
class Register:
    """One value with a version; a write lands only over the version it read. A rival writer
    changes it just before each of the first `rivals` writes."""

    rivals: int = 0
    value: str = "v0"
    version: int = 0
    writes: int = 0
    reads: list[Read] = field(default_factory=list)

    def read(self) -> Read:
        self.reads.append(Read(self.value, self.version))
        return self.reads[-1]

    def write(self, value: str, over: Read) -> bool:
        self.writes += 1
        if self.writes <= self.rivals:
            self.value, self.version = f"rival {self.writes}", self.version + 1
        if over.version != self.version:
            return False
        self.value, self.version = value, self.version + 1
        return True


def appending(register: Register, suffix: str) -> Callable[[Read], str | Lost[Read]]:
    """One round: append `suffix` to the value read, over its version."""

    def attempt(read: Read) -> str | Lost[Read]:
        if register.write(read.value + suffix, over=read):
            return register.value
        return Lost(register.read())

    return attempt


def test_a_write_that_lands_first_time_is_the_answer() -> None:
    # Given a record nobody else writes
    register = Register()

    # When a compare-and-set appends to it
    answer = compare_and_set(register.read(), appending(register, "+mine"), gave_up=lambda _: "gave up")

    # Then one write landed, over the one read
    assert (answer, register.writes, len(register.reads)) == ("v0+mine", 1, 1)


def test_a_lost_round_is_tried_again_over_the_record_read_again() -> None:
    # Given a record a rival writes just before each of the first two writes
    register = Register(rivals=2)

    # When a compare-and-set appends to it
    answer = compare_and_set(register.read(), appending(register, "+mine"), gave_up=lambda _: "gave up")

    # Then the third round lands over the rival's last write: nothing the rival wrote is lost
    assert answer == "rival 2+mine"
    assert register.writes == 3


def test_after_every_round_lost_gave_up_decides_over_the_record_last_read() -> None:
    # Given a record a rival writes just before every write
    register = Register(rivals=MAX_ATTEMPTS + 5)
    given_up: list[Read] = []

    def gave_up(read: Read) -> str:
        given_up.append(read)
        return "left as it is"

    # When a compare-and-set appends to it
    answer = compare_and_set(register.read(), appending(register, "+mine"), gave_up=gave_up)

    # Then it writes MAX_ATTEMPTS times, never more, and gave_up answers once, with the last read
    assert answer == "left as it is"
    assert register.writes == MAX_ATTEMPTS
    assert given_up == [register.reads[-1]]
    assert register.value == f"rival {MAX_ATTEMPTS}"


def test_a_gave_up_that_raises_answers_the_caller_with_its_error() -> None:
    # Given a record a rival writes just before every write
    register = Register(rivals=MAX_ATTEMPTS)

    def conflict(read: Read) -> str:
        raise Conflict(f"the record kept changing (last read {read.value}); send it again.")

    # When a compare-and-set that gives up with a Conflict appends to it / Then the Conflict is raised
    with pytest.raises(Conflict, match=f"last read rival {MAX_ATTEMPTS}"):
        compare_and_set(register.read(), appending(register, "+mine"), gave_up=conflict)
    assert register.writes == MAX_ATTEMPTS


def test_a_round_that_needs_no_write_ends_without_writing() -> None:
    # Given a record that already holds what is wanted
    register = Register(value="wanted")

    def attempt(read: Read) -> str | Lost[Read]:
        return read.value if read.value == "wanted" else Lost(register.read())

    # When a compare-and-set runs over it / Then it answers without writing
    assert compare_and_set(register.read(), attempt, gave_up=lambda _: "gave up") == "wanted"
    assert register.writes == 0


def stored(memory_id: str) -> Memory:
    return make_memory(tenant="acme", memory_id=memory_id, session_uuid="", parent="thread-cas")


def test_a_memory_read_again_after_a_lost_write_is_the_next_rounds_record() -> None:
    # Given a stored memory
    engine = fake_engine()
    memory = stored("m-1")
    assert engine.store.save_memory(memory)

    # When it is read again after a lost write
    outcome = read_again(engine, memory, gone="deleted")

    # Then the next round gets it as stored
    assert isinstance(outcome, Lost)
    assert outcome.fresh.memory_id == "m-1"


def test_a_memory_deleted_meanwhile_ends_the_rounds_with_the_callers_answer() -> None:
    # Given a memory that is no longer stored
    engine = fake_engine()

    # When it is read again after a lost write / Then the rounds end with the caller's answer for it
    assert read_again(engine, stored("m-gone"), gone="deleted") == "deleted"
