// Where the memory inspector may send its key: the page's own origin, under the path ?api= names
// (`?api=/prod` behind CloudFront, see docs/inspector.md), and nowhere else. A plain function of
// the requested value and the page's address, so it is tested by itself (tests/unit/
// test_inspector_origin.py runs it under Node) as well as in the browser.
"use strict";

// The base path for `?api=<requested>` on the page at `page`: { base, refused }. `refused` is the
// requested value when it would leave the page's origin, by whatever spelling: another origin
// (`https://host`, `//host`, `/\host`, `https:host`, tabs or encodings the URL parser removes),
// or a path that leaves it once a route is appended (`/.//host` is the path `//host`, and
// `//host/v1/...` names the host `host`). A query, a fragment or credentials are refused too: a
// base is a plain path.
function apiBase(requested, page) {
  if (!requested) return { base: "", refused: null };
  const refused = { base: "", refused: requested };
  let url;
  try {
    url = new URL(requested, page);  // the browser's own reading, tricks included
  } catch (error) {
    return refused;
  }
  const origin = new URL(page).origin;
  if (url.origin !== origin || url.username || url.password || url.search || url.hash) return refused;
  const base = url.pathname.replace(/\/+$/, "");
  if (/^[/\\]{2}|\\/.test(base)) return refused;
  if (apiTarget(base, "/v1/inspect/threads", page) === null) return refused;
  return { base, refused: null };
}

// The address of `path` under `base`, or null when it would not be on the page's origin: every
// call is checked again as it is made, whatever `base` holds.
function apiTarget(base, path, page) {
  try {
    const target = new URL(base + path, page);
    return target.origin === new URL(page).origin ? target.href : null;
  } catch (error) {
    return null;
  }
}

if (typeof module !== "undefined") module.exports = { apiBase, apiTarget };
