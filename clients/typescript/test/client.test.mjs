// The TypeScript client, with Node's own test runner: its rules against a fake fetch, then every
// kind of route against a running memory-engine (MEMORY_ENGINE_URL, MEMORY_ENGINE_API_KEY; the
// Python suite's tests/e2e/test_typescript_client.py starts one and runs this file).
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, it } from "node:test";

import {
  Conflict,
  InvalidRequest,
  MemoryEngine,
  NotFound,
  RateLimited,
  TransportError,
  Unauthorized,
} from "../dist/index.js";

const json = (status, body, headers = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json", ...headers } });

function scripted(...answers) {
  const seen = [];
  const fetch = async (url, init) => {
    seen.push({ url, init });
    const next = answers.shift();
    if (next instanceof Error) throw next;
    return next;
  };
  return { fetch, seen };
}

const offline = (fetch, extra = {}) =>
  new MemoryEngine({ url: "http://api.test", apiKey: "key", fetch, sleep: async () => {}, ...extra });

describe("the client's rules (a fake fetch)", () => {
  it("retries a 503 after its Retry-After and returns the answer", async () => {
    const waits = [];
    const { fetch, seen } = scripted(
      json(503, { status: "error", message: "busy" }, { "Retry-After": "2" }),
      json(200, { status: "ok", service: "memory-engine" }),
    );
    const engine = offline(fetch, { sleep: async (ms) => void waits.push(ms) });

    const answer = await engine.health();

    assert.equal(answer.status, "ok");
    assert.equal(seen.length, 2);
    assert.deepEqual(waits, [2000]);
  });

  it("gives up after the retries with a retryable error carrying the API's message", async () => {
    const { fetch } = scripted(...Array.from({ length: 4 }, () => json(429, { status: "error", message: "slow down" })));

    await assert.rejects(offline(fetch).health(), (error) => {
      assert.ok(error instanceof RateLimited);
      assert.equal(error.retryable, true);
      assert.match(error.message, /slow down/);
      return true;
    });
  });

  it("calls a refused connection a retryable TransportError with words", async () => {
    const refused = Object.assign(new TypeError("fetch failed"), { cause: { code: "ECONNREFUSED" } });
    const { fetch, seen } = scripted(refused, refused, refused, refused);

    await assert.rejects(offline(fetch).health(), (error) => {
      assert.ok(error instanceof TransportError);
      assert.equal(error.retryable, true);
      assert.match(error.message, /could not connect.*ECONNREFUSED/);
      return true;
    });
    assert.equal(seen.length, 4); // never sent: tried again
  });

  it("never retries a reset (the request may have run) but calls it retryable", async () => {
    const reset = Object.assign(new TypeError("fetch failed"), { cause: { code: "ECONNRESET" } });
    const { fetch, seen } = scripted(reset);

    await assert.rejects(offline(fetch).health(), (error) => error instanceof TransportError && error.retryable);
    assert.equal(seen.length, 1);
  });

  it("refuses text UTF-8 cannot encode before sending, naming the field", async () => {
    const { fetch, seen } = scripted();

    await assert.rejects(
      offline(fetch).consolidate("s1", "t1", { uuid: "d1", query: "half an emoji \ud83d" }),
      (error) => error instanceof InvalidRequest && error.fields.join() === "new_dialog.query" && /UTF-8/.test(error.message),
    );
    assert.equal(seen.length, 0);
  });

  it("needs a key for every route but health, before sending", async () => {
    const { fetch, seen } = scripted();
    const engine = new MemoryEngine({ url: "http://api.test", apiKey: "", fetch });

    await assert.rejects(engine.listThreads(), Unauthorized);
    assert.equal(seen.length, 0);
  });

  it("reads the game's and OpenAI's error envelopes", async () => {
    const { fetch } = scripted(
      json(422, { code: 422, msg: "session_id: is required", data: { errors: [{ field: "session_id", message: "is required" }] } }),
      json(409, { error: { message: "taken", type: "invalid_request_error", param: "userid" } }),
    );
    const engine = offline(fetch);

    await assert.rejects(engine.gameMemory("s"), (e) => e instanceof InvalidRequest && e.fields[0] === "session_id");
    await assert.rejects(engine.forgetUser("u"), (e) => e instanceof Conflict && e.fields[0] === "userid");
  });

  it("keeps at most maxConcurrency requests in flight", async () => {
    let inFlight = 0;
    let most = 0;
    const fetch = async () => {
      most = Math.max(most, ++inFlight);
      await new Promise((resolve) => setTimeout(resolve, 2));
      inFlight--;
      return json(200, { status: "ok", service: "memory-engine" });
    };
    const engine = offline(fetch, { maxConcurrency: 4 });

    const answers = await Promise.all(Array.from({ length: 40 }, () => engine.health()));

    assert.equal(answers.length, 40);
    assert.equal(most, 4);
  });
});

const live = process.env.MEMORY_ENGINE_URL && process.env.MEMORY_ENGINE_API_KEY;

describe("against a running memory-engine", { skip: live ? false : "MEMORY_ENGINE_URL and _API_KEY not set" }, () => {
  const engine = new MemoryEngine({ timeoutMs: 60_000 });
  const thread = () => `ts-${randomUUID().slice(0, 8)}`;

  it("answers health without a key", async () => {
    const answer = await new MemoryEngine({ apiKey: "" }).health();
    assert.equal(answer.status, "ok");
  });

  it("finds a turn just consolidated, in English and in Korean", async () => {
    const t = thread();
    await engine.consolidate(t, t, { uuid: `${t}-d1`, query: "My sister Ana moved to Porto.", answer: "Nice!" }, { language: "en", userName: "Alex" });
    await engine.consolidate(t, t, { uuid: `${t}-d2`, query: "우리 고양이 보리는 세 살이야.", answer: "귀엽다!" }, { language: "ko" });

    const english = await engine.retrieve(t, "Where does my sister live?", { limit: 3 });
    const korean = await engine.retrieve(t, "고양이 이름이 뭐야?", { limit: 3 });

    assert.equal(english.data[0].memory_id, `${t}-d1`);
    assert.equal(korean.data[0].memory_id, `${t}-d2`);
  });

  it("says an extraction was queued, waits for it, and finds the memory", async () => {
    const t = thread();
    const first = await engine.consolidate(t, t, { uuid: `${t}-d1`, query: "I keep bees on the roof.", answer: "Lovely." }, { language: "en" });
    const forced = await engine.consolidate(
      t, t, { uuid: `${t}-d2`, query: "They make linden honey in June.", answer: "Tasty." }, { language: "en", forceSummary: true },
    );

    const session = await engine.waitForExtraction(t, { timeoutMs: 90_000, intervalMs: 200 });
    const found = await engine.retrieve(t, "What do my bees make?", { maxTokens: 300 });

    assert.deepEqual([first.extraction_queued, first.buffered], [false, 1]);
    assert.equal(forced.extraction_queued, true);
    assert.equal(session.counts.buffered, 0);
    assert.equal(found.data[0].kind, "memory");
    assert.ok(found.tokens !== null && found.tokens <= 300);
  });

  it("gives a memory's hit the dates its turns spoke of, resolved against the turn's own time", async () => {
    const t = thread();
    const said = "2026-05-09T10:00:00Z";
    await engine.consolidate(
      t, t, { uuid: `${t}-d1`, query: "Yesterday I planted tomatoes in the garden.", answer: "Nice!", timestamp: said },
      { language: "en", forceSummary: true },
    );

    await engine.waitForExtraction(t, { timeoutMs: 90_000, intervalMs: 200 });
    const found = await engine.retrieve(t, "What did I plant?", { limit: 1 });

    const [date] = found.data[0].event_dates;
    assert.equal(found.data[0].kind, "memory");
    assert.deepEqual([date.phrase.toLowerCase(), date.dialog_uuid], ["yesterday", `${t}-d1`]);
    assert.equal(new Date(date.start).toISOString(), "2026-05-08T00:00:00.000Z");
  });

  it("names the fields of a request the API refuses, and says what is missing", async () => {
    await assert.rejects(
      engine.consolidate("s", "t", { uuid: "d", query: "x" }, { language: "x".repeat(40) }),
      (error) => error instanceof InvalidRequest && error.status === 422 && error.fields.includes("language"),
    );
    await assert.rejects(engine.showSession(`nobody-${randomUUID()}`), (error) => error instanceof NotFound && error.status === 404);
  });

  it("refuses a wrong key", async () => {
    await assert.rejects(new MemoryEngine({ apiKey: "wrong" }).listThreads(), Unauthorized);
  });

  it("stores a fact under a scope, finds it by meaning and deletes it", async () => {
    const scope = { user_id: thread() };
    const fact = await engine.bankCreate("The user is allergic to peanuts.", scope);
    await engine.bankCreate("The user plays the cello.", scope);

    const found = await engine.bankSearch(scope, "What can the user not eat?", { topK: 2 });
    await engine.bankDelete(fact.name);

    assert.equal(found.retrieved_memories[0].memory.name, fact.name);
    await assert.rejects(engine.bankGet(fact.name), NotFound);
  });

  it("lists models in OpenAI's shape", async () => {
    const models = await engine.listModels();
    assert.equal(models.object, "list");
    assert.ok(Array.isArray(models.data));
  });
});
