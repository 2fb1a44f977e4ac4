// The JSON API of the same server, as the page calls it: GET /models, POST /translate (and its
// streamed form /translate/stream), /attention, /detect. Nothing is fetched from elsewhere.

// A server started with --api-key-file answers 401 without a key: the page asks for one once
// and keeps it for this tab only (sessionStorage).
function apiKey() {
  return sessionStorage.getItem("anuvad-api-key") || "";
}

// An HTTP header carries printable ASCII only (fetch throws on anything else).
const VALID_KEY = /^[\x21-\x7e]+$/;

const stopped = () => Object.assign(new Error("stopped"), { stopped: true });

// The server's answer to ``path`` (a GET without ``body``, else a JSON POST), after asking for
// an API key once on a 401. ``signal`` (an AbortController's) stops the request: it then throws
// an error whose ``stopped`` is true; the server notices the closed connection and stops the
// search too. Any other failure throws an error whose message is the server's, prefixed by the
// status, and whose ``status`` and ``body`` are the answer's.
// The Authorization header of the key this tab holds ({} without one).
export function authHeaders() {
  if (apiKey() && !VALID_KEY.test(apiKey())) sessionStorage.removeItem("anuvad-api-key");
  return apiKey() ? { Authorization: `Bearer ${apiKey()}` } : {};
}

async function send(path, body, signal, retried = false) {
  const headers = authHeaders();
  const options = body === undefined ? { headers } : {
    method: "POST",
    headers: { ...headers, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  };
  if (signal) options.signal = signal;
  let response;
  try {
    response = await fetch(path, options);
  } catch (err) {
    // (fetch rejects with the reason given to abort(), an AbortError without one)
    if (err.name === "AbortError" || (signal && signal.aborted)) throw stopped();
    throw new Error(`cannot reach the server (${err.message})`);
  }
  if (response.status === 401 && !retried) {
    const key = (window.prompt("This server needs an API key (ask its operator):", "") || "").trim();
    if (key && !VALID_KEY.test(key)) throw new Error("401: an API key is printable ASCII without spaces");
    if (key) {
      sessionStorage.setItem("anuvad-api-key", key);
      return send(path, body, signal, true);
    }
  }
  if (response.ok) return response;
  const data = await readJson(response, signal);
  let message = (data && data.error) || response.statusText || "no answer";
  if (response.status === 503) {
    const wait = response.headers.get("Retry-After");
    message = `the server is busy; try again${wait ? ` in ${wait} s` : " shortly"} (${message})`;
  }
  throw Object.assign(new Error(`${response.status}: ${message}`), { status: response.status, body: data });
}

async function readJson(response, signal) {
  try {
    return await response.json();
  } catch (err) {
    // Stopped while the answer was still arriving: the body is cut off.
    if (err.name === "AbortError" || (signal && signal.aborted)) throw stopped();
    return null;
  }
}

// The JSON answer of ``path`` (see ``send``).
export async function api(path, body = undefined, signal = undefined) {
  const response = await send(path, body, signal);
  const data = await readJson(response, signal);
  if (data === null) throw new Error(`${response.status}: the server's answer was not JSON`);
  return data;
}

// ``POST /translate/stream``: ``onEvent(event)`` for its first line (``{event: "start", total,
// model, ...}``) and for each sentence as the server finishes it (``{event: "sentence",
// sentence, done, total, result}``); returns the whole response, as ``/translate`` gives it.
// A server without the streamed endpoint (404, 405) is asked ``/translate`` instead.
export async function translateStreamed(body, signal, onEvent) {
  let response;
  try {
    response = await send("/translate/stream", body, signal);
  } catch (err) {
    if (err.status !== 404 && err.status !== 405) throw err;
    return api("/translate", body, signal);
  }
  for await (const event of jsonLines(response, signal)) {
    if (event.event === "start" || event.event === "sentence") onEvent(event);
    else if (event.event === "done") return event.response;
    else if (event.event === "error") {
      throw Object.assign(new Error(`${event.status}: ${event.error}`), { status: event.status, body: event });
    }
  }
  throw new Error("the server's answer ended before the translation did");
}

// The JSON objects of a newline-delimited JSON body, one per line, as they arrive.
async function* jsonLines(response, signal) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    let chunk;
    try {
      chunk = await reader.read();
    } catch (err) {
      if (err.name === "AbortError" || signal.aborted) throw stopped();
      throw new Error(`the server's answer broke off (${err.message})`);
    }
    if (chunk.done) break;
    buffer += decoder.decode(chunk.value, { stream: true });
    let newline;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      if (line) yield JSON.parse(line);
    }
  }
  if (buffer.trim()) yield JSON.parse(buffer);
}
