// Where the page's samples come from. The report file embeds them (base64 blocks, so
// that it works offline); `harness view` serves them from its own address. Both give
// the sample list the same index (see harness/report/sample_list.py) and a sample's
// detail on demand; only the served one changes while a run is being written.
//
// source.index()            -> Promise of the index {columns, runs, ..., rows, page_size}
// source.detail(sample)     -> Promise of a sample's detail; sample = {run, key, entry}
// source.changes(version)   -> Promise of {version, rows changed since version, name lists}
//                              (the served source only: `live` is true)
var SampleSource = (function () {
  "use strict";

  // --- the report file: base64 zlib blocks in the page ------------------------------
  // The index and the sample chunks are base64 of zlib streams, inflated with
  // DecompressionStream. A string that starts with U+0000 is a reference to another
  // entry (or, with a second U+0000, a string that starts with one); see
  // harness/report/samples.py.
  function embedded() {
    var REF = "\u0000";
    var index = null, chunks = {}, resolved = {}, pending = {};
    function inflate(base64) {
      var binary = atob(base64);
      var bytes = new Uint8Array(binary.length);
      for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
      var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
      return new Response(stream).text();
    }
    function block(id) { return document.getElementById(id).textContent; }
    function chunkOf(entry) {
      var starts = index.chunks, lo = 0, hi = starts.length - 1;
      while (lo < hi) {
        var mid = (lo + hi + 1) >> 1;
        if (starts[mid] <= entry) lo = mid; else hi = mid - 1;
      }
      return lo;
    }
    function loadChunk(number) {
      if (!chunks[number]) chunks[number] = inflate(block("c" + number)).then(JSON.parse);
      return chunks[number];
    }
    function isRef(value) {
      return typeof value === "string" && value.charAt(0) === REF && value.charAt(1) !== REF;
    }
    function refsIn(value, out) {
      if (isRef(value)) out.push(Number(value.slice(1)));
      else if (Array.isArray(value)) value.forEach(function (v) { refsIn(v, out); });
      else if (value && typeof value === "object") {
        Object.keys(value).forEach(function (k) { refsIn(value[k], out); });
      }
      return out;
    }
    function build(value) {
      if (typeof value === "string") {
        if (value.charAt(0) !== REF) return value;
        return value.charAt(1) === REF ? value.slice(1) : resolved[Number(value.slice(1))];
      }
      if (Array.isArray(value)) return value.map(build);
      if (value && typeof value === "object") {
        var copy = {};
        Object.keys(value).forEach(function (k) { copy[k] = build(value[k]); });
        return copy;
      }
      return value;
    }
    // Entry number -> its value with every reference filled in (shared values once).
    function entry(number) {
      if (resolved.hasOwnProperty(number)) return Promise.resolve(resolved[number]);
      if (!pending[number]) {
        var chunk = chunkOf(number);
        pending[number] = loadChunk(chunk).then(function (entries) {
          var raw = entries[number - index.chunks[chunk]];
          return Promise.all(refsIn(raw, []).map(entry)).then(function () {
            resolved[number] = build(raw);
            return resolved[number];
          });
        });
      }
      return pending[number];
    }
    return {
      live: false,
      index: function () {
        return inflate(block("sample-index")).then(JSON.parse).then(function (data) {
          index = data;
          return data;
        });
      },
      detail: function (sample) { return entry(sample.entry); }
    };
  }

  // --- `harness view`: JSON from the page's own server ------------------------------
  function served() {
    var details = {};  // a sample's detail by run, key and version (a retried record changes)
    function getJSON(path) {
      return fetch(path, {cache: "no-store"}).then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status + " for " + path);
        return response.json();
      });
    }
    return {
      live: true,
      index: function () { return getJSON("api/index"); },
      detail: function (sample) {
        var id = sample.run + "\u0000" + sample.key + "\u0000" + sample.entry;
        if (!details[id]) {
          details[id] = getJSON("api/sample?run=" + encodeURIComponent(sample.run) +
                                "&key=" + encodeURIComponent(sample.key));
          details[id].catch(function () { delete details[id]; });
        }
        return details[id];
      },
      changes: function (version) { return getJSON("api/rows?since=" + version); }
    };
  }

  return {
    forPage: function () {
      return document.body.getAttribute("data-source") === "server" ? served() : embedded();
    }
  };
})();
