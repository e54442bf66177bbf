/**
 * What a call to memory-engine can fail with: one error class per kind of answer, each carrying
 * the API's error body (its message and the fields it names), and `retryable` saying whether the
 * same request may succeed later: the same classes and rules as the Python client's.
 */

export interface FieldError {
  field: string;
  message: string;
}

export interface ApiErrorOptions {
  status?: number;
  errors?: FieldError[];
  body?: unknown;
  retryAfter?: number;
  retryable?: boolean;
}

/** An answer other than success; `status` is undefined when no answer came back. */
export class ApiError extends Error {
  readonly status?: number;
  readonly errors: FieldError[];
  readonly body: unknown;
  readonly retryAfter?: number;
  readonly retryable: boolean;

  constructor(message: string, options: ApiErrorOptions = {}) {
    super(options.status !== undefined ? `${options.status}: ${message}` : message);
    this.name = new.target.name;
    this.status = options.status;
    this.errors = options.errors ?? [];
    this.body = options.body;
    this.retryAfter = options.retryAfter;
    this.retryable = options.retryable ?? false;
  }

  /** The fields the API refused, by their dotted paths (`new_dialog.query`). */
  get fields(): string[] {
    return this.errors.map((error) => error.field);
  }
}

/** 400 or 422: the request is wrong (each bad field in `errors`); also raised before sending. */
export class InvalidRequest extends ApiError {}
/** 401 or 403: no key, a wrong key, or a key without access to this route. */
export class Unauthorized extends ApiError {}
/** 404: the session, dialog, memory or user is not there. */
export class NotFound extends ApiError {}
/** 409: the id is taken by something else. */
export class Conflict extends ApiError {}
/** 413: the body is over the API's size limit. */
export class PayloadTooLarge extends ApiError {}
/** 429 after the retries: too many requests for this key; `retryAfter` says when to come back. */
export class RateLimited extends ApiError {
  constructor(message: string, options: ApiErrorOptions = {}) {
    super(message, { ...options, retryable: true });
  }
}
/** A 5xx: the service or a dependency of it failed. */
export class ServerError extends ApiError {}
/** 503 after the retries: a dependency is down or busy, or the server has no room now. */
export class Unavailable extends ServerError {
  constructor(message: string, options: ApiErrorOptions = {}) {
    super(message, { ...options, retryable: true });
  }
}
/** No answer: refused, reset or timed out. Retryable, except a timeout once sent (it may still run). */
export class TransportError extends ApiError {}

const BY_STATUS: Record<number, new (message: string, options: ApiErrorOptions) => ApiError> = {
  400: InvalidRequest,
  401: Unauthorized,
  403: Unauthorized,
  404: NotFound,
  409: Conflict,
  413: PayloadTooLarge,
  422: InvalidRequest,
  429: RateLimited,
  503: Unavailable,
};

/** The error for an error answer, whichever envelope it came in (native, game, OpenAI's, API Gateway's). */
export function errorFor(status: number, text: string, retryAfter?: number): ApiError {
  let body: unknown = undefined;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  const [message, errors] = readBody(body);
  const Kind = BY_STATUS[status] ?? (status >= 500 ? ServerError : ApiError);
  return new Kind(message || text.trim().slice(0, 500) || `HTTP ${status}`, {
    status,
    errors,
    body: body ?? text,
    retryAfter,
  });
}

function readBody(body: unknown): [string, FieldError[]] {
  if (typeof body !== "object" || body === null) return ["", []];
  const record = body as Record<string, unknown>;
  const openai = record.error;
  if (typeof openai === "object" && openai !== null) {
    const error = openai as Record<string, unknown>;
    const message = String(error.message ?? "");
    return [message, error.param ? [{ field: String(error.param), message }] : []];
  }
  const message = [record.message, record.msg, record.Message].find((value) => value) ?? "";
  let raw = record.errors;
  if (raw === undefined && typeof record.data === "object" && record.data !== null) {
    raw = (record.data as Record<string, unknown>).errors;
  }
  const errors = Array.isArray(raw)
    ? raw
        .filter((item): item is Record<string, unknown> => typeof item === "object" && item !== null)
        .map((item) => ({ field: String(item.field ?? "body"), message: String(item.message ?? "") }))
    : [];
  return [String(message), errors];
}

/** Lone surrogates (half of an emoji cut in two) that UTF-8 cannot encode: refused before sending. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function checkEncodable(value: unknown, path: (string | number)[] = [], found: string[] = []): string[] {
  if (typeof value === "string") {
    if (LONE_SURROGATE.test(value)) found.push(path.join(".") || "body");
  } else if (Array.isArray(value)) {
    value.forEach((item, n) => checkEncodable(item, [...path, n], found));
  } else if (typeof value === "object" && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      checkEncodable(key, path, found);
      checkEncodable(item, [...path, key], found);
    }
  }
  return found;
}

export function refuseUnencodable(value: unknown): void {
  const fields = checkEncodable(value);
  if (fields.length === 0) return;
  throw new InvalidRequest(
    `Invalid request (not sent): ${fields.join(", ")}: text that cannot be encoded as UTF-8 (a lone ` +
      "surrogate such as \\ud800, often half of an emoji cut in two): send the whole character or leave it out.",
    { errors: fields.map((field) => ({ field, message: "cannot be encoded as UTF-8" })) },
  );
}
