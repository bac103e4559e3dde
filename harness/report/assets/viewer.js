// The report's sample viewer (one sample is drawn by SampleView, assets/sample.js). It reads data with JSON.parse and writes it with
// textContent only (never innerHTML), so no text from a record can become markup.
//
// Data (see harness/report/samples.py): the index and the sample chunks are base64 of
// zlib streams, inflated with DecompressionStream. A string that starts with U+0000
// is a reference to another entry (or, with a second U+0000, a string that starts
// with one).
(function () {
  "use strict";
  var REF = "\u0000";
  var OUTCOMES = ["fail", "pass", "error"];
  var COL = {run: 0, bench: 1, subset: 2, sampleId: 3, trial: 4, outcome: 5, reward: 6, key: 7,
             entry: 8};
  var index = null, rows = [], filtered = [], page = 0, PAGE = 50;
  var current = -1, partner = null;  // the opened sample, and the run shown beside it
  var byKey = {}, byTask = {};

  // --- data --------------------------------------------------------------------------------
  function inflate(base64) {
    var binary = atob(base64);
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
    return new Response(stream).text();
  }
  function block(id) { return document.getElementById(id).textContent; }
  var chunks = {}, resolved = {};
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
  var pending = {};
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

  // --- helpers -----------------------------------------------------------------------------
  var el = SampleView.el;
  function taskOf(key) {
    var hash = key.lastIndexOf("#");
    return hash > 0 ? key.slice(0, hash) : key;
  }
  function sampleLabel(r) {
    return (r[COL.outcome] === 1 ? "PASS " : r[COL.outcome] === 2 ? "ERR  " : "FAIL ") +
      index.runs[r[COL.run]] + " · " + r[COL.key] +
      (r[COL.reward] === null ? "" : " · reward " + r[COL.reward]);
  }

  // --- list --------------------------------------------------------------------------------
  function fillSelect(id, values) {
    var select = document.getElementById(id);
    values.forEach(function (value, i) {
      var option = el("option", null, value);
      option.value = String(i);
      select.appendChild(option);
    });
    select.addEventListener("change", function () { page = 0; applyFilters(); });
  }
  function selected(id) {
    var value = document.getElementById(id).value;
    return value === "" ? null : Number(value);
  }
  function applyFilters() {
    var run = selected("f-run"), bench = selected("f-bench"), subset = selected("f-subset");
    var outcome = document.getElementById("f-outcome").value;
    var text = document.getElementById("f-text").value.toLowerCase();
    filtered = [];
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      if (run !== null && r[COL.run] !== run) continue;
      if (bench !== null && r[COL.bench] !== bench) continue;
      if (subset !== null && r[COL.subset] !== subset) continue;
      if (outcome !== "" && OUTCOMES[r[COL.outcome]] !== outcome) continue;
      if (text && r[COL.key].toLowerCase().indexOf(text) < 0) continue;
      filtered.push(i);
    }
    renderList();
  }
  function clearFilters() {
    ["f-run", "f-bench", "f-subset", "f-outcome", "f-text"].forEach(function (id) {
      document.getElementById(id).value = "";
    });
    applyFilters();
  }
  function renderList() {
    var list = document.getElementById("list");
    var pages = Math.max(1, Math.ceil(filtered.length / PAGE));
    page = Math.min(page, pages - 1);
    list.replaceChildren();
    filtered.slice(page * PAGE, page * PAGE + PAGE).forEach(function (i) {
      var label = sampleLabel(rows[i]);
      var button = el("button", OUTCOMES[rows[i][COL.outcome]], label);
      button.type = "button";
      button.title = label;
      if (i === current) {
        button.className += " current";
        button.setAttribute("aria-current", "true");
      }
      button.addEventListener("click", function () { open(i, partner, true); });
      list.appendChild(button);
    });
    document.getElementById("count").textContent =
      filtered.length + " of " + rows.length + " samples";
    document.getElementById("page").textContent = "page " + (page + 1) + " of " + pages;
    // The list scrolls to the opened sample (the page itself stays where it is).
    var mark = list.querySelector(".current");
    if (mark) {
      var top = mark.offsetTop - list.offsetTop;
      if (top < list.scrollTop || top + mark.offsetHeight > list.scrollTop + list.clientHeight) {
        list.scrollTop = Math.max(0, top - list.clientHeight / 2);
      }
    }
  }
  // Brings the list to the page that holds sample i (clearing filters that hide it).
  function reveal(i) {
    if (filtered.indexOf(i) < 0) clearFilters();
    page = Math.floor(filtered.indexOf(i) / PAGE);
  }

  function renderSample(row, data) {
    return SampleView.render(data, {
      title: row[COL.key] + "  (" + index.runs[row[COL.run]] + ")",
      outcome: OUTCOMES[row[COL.outcome]]
    });
  }
  // The same task (and trial, when there) in another run; undefined when it has none.
  function counterpart(i, run) {
    var row = rows[i];
    var same = byKey[run + "\u0000" + row[COL.key]];
    if (same !== undefined) return same;
    var trials = byTask[run + "\u0000" + taskOf(row[COL.key])];
    return trials ? trials[0] : undefined;
  }
  function partnerControl(i) {
    var bar = el("div", "toolbar");
    var label = el("label", null, "side by side with ");
    var select = el("select");
    select.id = "partner";
    var none = el("option", null, "(none)");
    none.value = "";
    select.appendChild(none);
    index.runs.forEach(function (name, r) {
      if (r === rows[i][COL.run] || counterpart(i, r) === undefined) return;
      var option = el("option", null, name);
      option.value = String(r);
      if (r === partner) option.selected = true;
      select.appendChild(option);
    });
    select.disabled = select.options.length < 2;
    select.addEventListener("change", function () {
      open(i, select.value === "" ? null : Number(select.value), true);
    });
    label.appendChild(select);
    bar.appendChild(label);
    var link = el("a", null, "link to this view");
    link.href = "#" + hashFor(i, partner);
    bar.appendChild(link);
    return bar;
  }
  function hashFor(i, other) {
    var row = rows[i];
    var hash = "sample=" + encodeURIComponent(index.runs[row[COL.run]] + "/" + row[COL.key]);
    if (other !== null && other !== undefined) {
      hash += "&with=" + encodeURIComponent(index.runs[other]);
    }
    return hash;
  }
  var opening = 0;
  // Opens sample i (beside the same task in run `other`, when given).
  function open(i, other, updateHash) {
    var ticket = ++opening;
    current = i;
    var j = other === null || other === undefined ? undefined : counterpart(i, other);
    partner = j === undefined ? null : other;
    reveal(i);
    renderList();
    if (updateHash && history.replaceState) history.replaceState(null, "", "#" + hashFor(i, partner));
    var wanted = [entry(rows[i][COL.entry])];
    if (j !== undefined) wanted.push(entry(rows[j][COL.entry]));
    return Promise.all(wanted).then(function (values) {
      if (ticket !== opening) return;  // a later click won
      var detail = document.getElementById("detail");
      detail.replaceChildren();
      detail.appendChild(partnerControl(i));
      var panes = el("div", j === undefined ? "panes" : "panes two");
      panes.appendChild(renderSample(rows[i], values[0]));
      if (j !== undefined) panes.appendChild(renderSample(rows[j], values[1]));
      detail.appendChild(panes);
      document.body.setAttribute("data-opened", rows[i][COL.key]);
    }).catch(function (error) {
      if (ticket !== opening) return;
      document.getElementById("detail").textContent = "This sample could not be read: " + error;
      document.body.setAttribute("data-opened", "error: " + rows[i][COL.key]);
    });
  }

  // --- routing -----------------------------------------------------------------------------
  // #sample=<run>/<key>[&with=<run>]: that sample (a key without "#trial" names its
  // task: its first trial), beside the same task in the other run. Returns the
  // opening's promise, or null when the hash names no sample of this report.
  function fromHash() {
    var params = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (part) {
      var eq = part.indexOf("=");
      if (eq > 0) {
        try { params[part.slice(0, eq)] = decodeURIComponent(part.slice(eq + 1)); } catch (e) {}
      }
    });
    var wanted = params.sample || "", slash = wanted.indexOf("/");
    if (slash <= 0) return null;
    var run = index.runs.indexOf(wanted.slice(0, slash));
    var key = wanted.slice(slash + 1);
    var i = byKey[run + "\u0000" + key];
    if (i === undefined) i = (byTask[run + "\u0000" + key] || [])[0];
    if (i === undefined) return null;
    var other = params["with"] === undefined ? -1 : index.runs.indexOf(params["with"]);
    return open(i, other < 0 ? null : other, false);
  }
  function baselineChooser() {
    var select = document.getElementById("baseline");
    if (!select) return;
    select.addEventListener("change", function () {
      document.querySelectorAll("div.baseline").forEach(function (div) {
        div.hidden = div.getAttribute("data-baseline") !== select.value;
      });
    });
  }

  function start(data) {
    index = data;
    rows = index.rows;
    PAGE = index.page_size;
    rows.forEach(function (row, i) {
      byKey[row[COL.run] + "\u0000" + row[COL.key]] = i;
      var task = row[COL.run] + "\u0000" + taskOf(row[COL.key]);
      (byTask[task] = byTask[task] || []).push(i);
    });
    fillSelect("f-run", index.runs);
    fillSelect("f-bench", index.benchmarks);
    fillSelect("f-subset", index.subsets);
    document.getElementById("f-outcome").addEventListener("change", function () {
      page = 0; applyFilters();
    });
    document.getElementById("f-text").addEventListener("input", function () {
      page = 0; applyFilters();
    });
    document.getElementById("prev").addEventListener("click", function () {
      if (page > 0) { page -= 1; renderList(); }
    });
    document.getElementById("next").addEventListener("click", function () {
      page += 1; renderList();
    });
    window.addEventListener("hashchange", function () {
      if (fromHash()) document.getElementById("samples").scrollIntoView();
    });
    applyFilters();
    var linked = fromHash();
    if (linked) document.getElementById("samples").scrollIntoView();
    return linked || (filtered.length ? open(filtered[0], null, false) : null);
  }
  baselineChooser();
  inflate(block("sample-index")).then(JSON.parse).then(start).then(function () {
    document.body.setAttribute("data-ready", String(Math.round(performance.now())));
  }, function (error) {
    document.getElementById("detail").textContent = "The samples could not be read: " + error;
    document.body.setAttribute("data-ready", "error");
  });
})();
