// The sample viewer of the report file and of `harness view`. It reads data with
// JSON.parse and writes it with textContent only (never innerHTML), so no text from a
// record can become markup. Its data come from SampleSource (data_source.js): the
// report's embedded blocks or the viewer's server, which also sends new records.
(function () {
  "use strict";
  var OUTCOMES = ["fail", "pass", "error"];
  var COL = {run: 0, bench: 1, subset: 2, sampleId: 3, trial: 4, outcome: 5, reward: 6, key: 7,
             entry: 8, errorKind: 9};
  var source = SampleSource.forPage();
  var index = null, rows = [], filtered = [], page = 0, PAGE = 50;
  var current = -1, partner = null;  // the opened sample, and the run shown beside it
  var byKey = {}, byTask = {};

  // --- helpers -----------------------------------------------------------------------------
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function pretty(value) {
    if (typeof value === "string") return value;
    try { return JSON.stringify(value, null, 2); } catch (e) { return String(value); }
  }
  function textOf(content) {
    if (content === null || content === undefined) return "";
    if (typeof content === "string") return content;
    if (Array.isArray(content)) {
      return content.map(function (part) {
        if (typeof part === "string") return part;
        if (part && typeof part.text === "string") return part.text;
        return pretty(part);
      }).join("\n");
    }
    return pretty(content);
  }
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
  // Filters by name (so that an address keeps meaning the same as names are added):
  // [element id, address parameter, the index's name list or null for a fixed list].
  var FILTERS = [["f-run", "run", "runs"], ["f-bench", "bench", "benchmarks"],
                 ["f-subset", "subset", "subsets"], ["f-error", "error", "error_kinds"],
                 ["f-outcome", "outcome", null], ["f-text", "q", null]];
  function control(id) { return document.getElementById(id); }
  // Adds an option for each name the select lacks (the served list grows as records land).
  function syncOptions(id, values) {
    var select = control(id);
    if (!select) return;
    var known = {};
    Array.prototype.forEach.call(select.options, function (o) { known[o.value] = true; });
    values.forEach(function (value, i) {
      if (value === "" || known[String(i)]) return;
      var option = el("option", null, value);
      option.value = String(i);
      select.appendChild(option);
    });
  }
  function selected(id) {
    var select = control(id);
    return !select || select.value === "" ? null : Number(select.value);
  }
  function filterChanged() { page = 0; applyFilters(); writeAddress(); }
  function applyFilters() {
    var run = selected("f-run"), bench = selected("f-bench"), subset = selected("f-subset");
    var kind = selected("f-error");
    var outcome = control("f-outcome").value;
    var text = control("f-text").value.toLowerCase();
    filtered = [];
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      if (run !== null && r[COL.run] !== run) continue;
      if (bench !== null && r[COL.bench] !== bench) continue;
      if (subset !== null && r[COL.subset] !== subset) continue;
      if (kind !== null && r[COL.errorKind] !== kind) continue;
      if (outcome !== "" && OUTCOMES[r[COL.outcome]] !== outcome) continue;
      if (text && (r[COL.key] + " " + (index.error_kinds || [])[r[COL.errorKind] || 0])
          .toLowerCase().indexOf(text) < 0) continue;
      filtered.push(i);
    }
    renderList();
  }
  function clearFilters() {
    FILTERS.forEach(function (filter) { if (control(filter[0])) control(filter[0]).value = ""; });
    applyFilters();
  }
  // The filters as address parameters (names, not positions); empty ones left out.
  function filterParams() {
    var out = [];
    FILTERS.forEach(function (filter) {
      var input = control(filter[0]);
      if (!input || input.value === "") return;
      var value = filter[2] === null ? input.value : index[filter[2]][Number(input.value)];
      out.push(filter[1] + "=" + encodeURIComponent(value));
    });
    return out;
  }
  function setFilters(params) {
    FILTERS.forEach(function (filter) {
      var input = control(filter[0]), wanted = params[filter[1]];
      if (!input) return;
      if (wanted === undefined) { input.value = ""; return; }
      var position = filter[2] === null ? wanted : index[filter[2]].indexOf(wanted);
      input.value = position === -1 ? "" : String(position);
    });
  }
  function renderList() {
    var list = document.getElementById("list");
    var pages = Math.max(1, Math.ceil(filtered.length / PAGE));
    page = Math.min(page, pages - 1);
    list.replaceChildren();
    if (!rows.length) {
      list.appendChild(el("p", "empty", source.live ? "No records yet: the list fills in as " +
        "samples finish." : "No samples."));
    } else if (!filtered.length) {
      list.appendChild(el("p", "empty", "No sample matches these filters."));
    }
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

  // --- one sample --------------------------------------------------------------------------
  function section(title, isOpen) {
    var details = el("details");
    if (isOpen) details.open = true;
    details.appendChild(el("summary", null, title));
    return details;
  }
  function keyValues(pairs) {
    var table = el("table", "kv");
    pairs.forEach(function (pair) {
      if (pair[1] === undefined) return;
      var tr = el("tr");
      tr.appendChild(el("td", null, pair[0]));
      tr.appendChild(el("td", null, typeof pair[1] === "object" && pair[1] !== null ?
        pretty(pair[1]) : String(pair[1])));
      table.appendChild(tr);
    });
    return table;
  }
  function isPlainObject(value) {
    return value !== null && typeof value === "object" && !Array.isArray(value);
  }
  // A list of flat objects (rubric verdicts, checks: every value plain) is shown as a
  // table, one row per item.
  function isFlatObject(value) {
    return isPlainObject(value) && Object.keys(value).every(function (k) {
      return value[k] === null || typeof value[k] !== "object";
    });
  }
  function isRecordList(value) {
    return Array.isArray(value) && value.length > 0 && value.every(isFlatObject);
  }
  function verdictCell(value) {
    if (value === true) return el("td", "verdict yes", "✓ yes");
    if (value === false) return el("td", "verdict no", "✗ no");
    if (value === null || value === undefined) return el("td", "verdict", "");
    return el("td", null, typeof value === "object" ? pretty(value) : String(value));
  }
  function recordTable(items) {
    var columns = [];
    items.forEach(function (item) {
      Object.keys(item).forEach(function (k) { if (columns.indexOf(k) < 0) columns.push(k); });
    });
    var table = el("table", "records");
    var head = el("tr");
    head.appendChild(el("th", null, "#"));
    columns.forEach(function (c) { head.appendChild(el("th", null, c)); });
    table.appendChild(head);
    items.forEach(function (item, n) {
      var tr = el("tr");
      tr.appendChild(el("td", "num", n + 1));
      columns.forEach(function (c) { tr.appendChild(verdictCell(item[c])); });
      table.appendChild(tr);
    });
    return table;
  }
  function scoreDetails(details) {
    var part = section("score details", true);
    if (!isPlainObject(details)) {
      part.appendChild(el("pre", null, pretty(details)));
      return part;
    }
    var scalars = [], rest = {};
    Object.keys(details).forEach(function (k) {
      var value = details[k];
      if (isRecordList(value)) {
        part.appendChild(el("div", "role", k + " (" + value.length + ")"));
        var wrap = el("div", "scroll");
        wrap.appendChild(recordTable(value));
        part.appendChild(wrap);
      } else if (value === null || typeof value !== "object") {
        scalars.push([k, value]);
      } else {
        rest[k] = value;
      }
    });
    if (scalars.length) part.insertBefore(keyValues(scalars), part.children[1] || null);
    if (Object.keys(rest).length) {  // nested details (judge windows, diagnostics), folded
      var more = section("more score details", false);
      more.appendChild(el("pre", null, pretty(rest)));
      part.appendChild(more);
    }
    return part;
  }
  function renderToolCall(call) {
    var fn = call && call["function"] ? call["function"] : call || {};
    var args = fn.arguments;
    if (typeof args !== "string") args = pretty(args);
    return el("pre", "call", "→ " + (fn.name || "?") + "(" + args + ")" +
      (call && call.id ? "   [id " + call.id + "]" : ""));
  }
  function renderMessage(message, number) {
    var role = String(message.role || "?");
    var box = el("div", "msg " + role.replace(/[^a-z_]/gi, "") + (message.hidden ? " hidden" : ""));
    var head = el("div", "role", "#" + number + " " + role);
    if (message.name) head.appendChild(el("span", "badge", String(message.name)));
    if (message.tool_call_id) {
      head.appendChild(el("span", "badge", "result of " + message.tool_call_id));
    }
    if (message.hidden) head.appendChild(el("span", "badge warn", "hidden from the agent"));
    box.appendChild(head);
    var reasoning = message.reasoning_content || message.reasoning;
    if (reasoning) {
      var thought = section("reasoning", false);
      thought.appendChild(el("pre", null, textOf(reasoning)));
      box.appendChild(thought);
    }
    var text = textOf(message.content);
    if (text) box.appendChild(el("pre", null, text));
    (message.tool_calls || []).forEach(function (call) { box.appendChild(renderToolCall(call)); });
    var known = {role: 1, content: 1, tool_calls: 1, name: 1, tool_call_id: 1, hidden: 1,
                 reasoning: 1, reasoning_content: 1};
    var rest = {};
    Object.keys(message).forEach(function (k) { if (!known[k]) rest[k] = message[k]; });
    if (Object.keys(rest).length) box.appendChild(el("pre", null, pretty(rest)));
    return box;
  }
  function without(object, keys) {
    var rest = {};
    Object.keys(object).forEach(function (k) { if (keys.indexOf(k) < 0) rest[k] = object[k]; });
    return rest;
  }
  function renderRehearsal(value) {
    var title = "rehearsal memory (" + (value.mode || "?") + ", N = " + value.n + ")";
    var part = section(title, true);
    part.appendChild(el("pre", null, value.memory ? textOf(value.memory) : "(no memory)"));
    (value.rehearsals || []).forEach(function (one, i) {
      var box = section("rehearsal " + (i + 1) + ": imagined episode (the real environment " +
        "was not touched)", false);
      (one.messages || []).forEach(function (m, n) { box.appendChild(renderMessage(m || {}, n)); });
      if (one.critique) {
        box.appendChild(el("div", "role", "self-critique"));
        box.appendChild(el("pre", null, textOf(one.critique)));
      }
      box.appendChild(el("pre", null, pretty(without(one, ["messages", "critique"]))));
      part.appendChild(box);
    });
    part.appendChild(el("pre", null, pretty(without(value, ["memory", "rehearsals"]))));
    return part;
  }
  function renderSample(row, data) {
    var pane = el("div", "pane");
    var traj = data.trajectory || {};
    var key = row[COL.key], run = index.runs[row[COL.run]];
    pane.appendChild(el("h3", null, key + "  (" + run + ")"));
    var score = data.score || {};
    pane.appendChild(keyValues([
      ["outcome", OUTCOMES[row[COL.outcome]]],
      ["status", data.status], ["passed", score.passed], ["reward", score.reward],
      ["progress", score.progress], ["tool TP/FP/FN", score.tool_tp === undefined ||
        score.tool_tp === null ? undefined : score.tool_tp + " / " + score.tool_fp + " / " +
        score.tool_fn],
      ["termination", traj.termination], ["tool calls", traj.tool_calls],
      ["tool errors", traj.tool_errors], ["latency (s)", data.latency_s],
      ["score error", data.score_error || undefined], ["note", data.note]
    ]));
    if (data.error) {
      var error = section(
        "error: " + (data.error.type || "") + ": " + (data.error.message || ""), true);
      error.appendChild(el("pre", null, data.error.traceback || ""));
      pane.appendChild(error);
    }
    if (score.details !== undefined && score.details !== null) {
      pane.appendChild(scoreDetails(score.details));
    }
    var extra = traj.extra || {};
    Object.keys(extra).forEach(function (name) {
      var value = extra[name];
      if (name === "rehearsal" && value && typeof value === "object") {
        pane.appendChild(renderRehearsal(value));
        return;
      }
      var part = section("extra — " + name, /rehears|memory|phase/i.test(name));
      part.appendChild(el("pre", null, pretty(value)));
      pane.appendChild(part);
    });
    var messages = traj.messages || [];
    var transcript = section("transcript (" + messages.length + " messages)", true);
    var resets = traj.context_resets || [];
    messages.forEach(function (message, n) {
      var r = resets.indexOf(n);
      if (r >= 0) {
        var mark = section(
          "context reset before #" + n + ": the model saw the given history", false);
        mark.className = "reset";
        ((traj.reset_histories || [])[r] || []).forEach(function (m, h) {
          mark.appendChild(renderMessage(m, "h" + h));
        });
        transcript.appendChild(mark);
      }
      transcript.appendChild(renderMessage(message || {}, n));
    });
    pane.appendChild(transcript);
    [["usage by role", traj.usage], ["parsed assistant turns", traj.turns],
     ["final state", traj.final_state], ["metadata", data.metadata]].forEach(function (pair) {
      if (pair[1] === undefined || pair[1] === null) return;
      var part = section(pair[0], false);
      part.appendChild(el("pre", null, pretty(pair[1])));
      pane.appendChild(part);
    });
    return pane;
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
    var parts = [];
    if (i >= 0) {
      var row = rows[i];
      parts.push("sample=" + encodeURIComponent(index.runs[row[COL.run]] + "/" + row[COL.key]));
      if (other !== null && other !== undefined) {
        parts.push("with=" + encodeURIComponent(index.runs[other]));
      }
    }
    return parts.concat(filterParams()).join("&");
  }
  // The address holds the filters and the opened sample, so that a link lands on both.
  function writeAddress() {
    if (history.replaceState) history.replaceState(null, "", "#" + hashFor(current, partner));
  }
  // The one place that draws a sample's pane.
  function drawSample(row, data) { return renderSample(row, data); }
  function sampleOf(row) {
    return {run: index.runs[row[COL.run]], key: row[COL.key], entry: row[COL.entry]};
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
    if (updateHash) writeAddress();
    var wanted = [source.detail(sampleOf(rows[i]))];
    if (j !== undefined) wanted.push(source.detail(sampleOf(rows[j])));
    return Promise.all(wanted).then(function (values) {
      if (ticket !== opening) return;  // a later click won
      var detail = document.getElementById("detail");
      detail.replaceChildren();
      detail.appendChild(partnerControl(i));
      var panes = el("div", j === undefined ? "panes" : "panes two");
      panes.appendChild(drawSample(rows[i], values[0]));
      if (j !== undefined) panes.appendChild(drawSample(rows[j], values[1]));
      detail.appendChild(panes);
      document.body.setAttribute("data-opened", rows[i][COL.key]);
    }).catch(function (error) {
      if (ticket !== opening) return;
      document.getElementById("detail").textContent = "This sample could not be read: " + error;
      document.body.setAttribute("data-opened", "error: " + rows[i][COL.key]);
    });
  }

  // --- routing -----------------------------------------------------------------------------
  function addressParams() {
    var params = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (part) {
      var eq = part.indexOf("=");
      if (eq > 0) {
        try { params[part.slice(0, eq)] = decodeURIComponent(part.slice(eq + 1)); } catch (e) {}
      }
    });
    return params;
  }
  // #sample=<run>/<key>[&with=<run>][&run=..&bench=..&subset=..&error=..&outcome=..&q=..]:
  // the filters, and that sample (a key without "#trial" names its task: its first
  // trial) beside the same task in the other run. Returns the opening's promise, or
  // null when the address names no sample of this page.
  function fromHash() {
    var params = addressParams();
    setFilters(params);
    applyFilters();
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

  // --- a run still being written -----------------------------------------------------------
  function digitsCompare(a, b) {
    a = a.replace(/^0+(?=\d)/, "");
    b = b.replace(/^0+(?=\d)/, "");
    return a.length !== b.length ? a.length - b.length : (a < b ? -1 : a > b ? 1 : 0);
  }
  // Ids in natural order: a number inside an id compares as a number (_2 before _10).
  function naturalCompare(a, b) {
    var x = String(a).split(/(\d+)/).filter(Boolean), y = String(b).split(/(\d+)/).filter(Boolean);
    for (var n = 0; n < Math.min(x.length, y.length); n++) {
      var dx = /^\d/.test(x[n]), dy = /^\d/.test(y[n]);
      if (dx !== dy) return dx ? -1 : 1;
      var c = dx ? digitsCompare(x[n], y[n]) : (x[n] < y[n] ? -1 : x[n] > y[n] ? 1 : 0);
      if (c) return c;
    }
    return x.length - y.length;
  }
  function rowCompare(a, b) {
    if (a[COL.run] !== b[COL.run]) return a[COL.run] - b[COL.run];
    var ba = index.benchmarks[a[COL.bench]], bb = index.benchmarks[b[COL.bench]];
    if (ba !== bb) return ba < bb ? -1 : 1;
    var sa = index.subsets[a[COL.subset]], sb = index.subsets[b[COL.subset]];
    if (sa !== sb) return sa < sb ? -1 : 1;
    return naturalCompare(a[COL.sampleId], b[COL.sampleId]) || a[COL.trial] - b[COL.trial];
  }
  function indexRows() {
    byKey = {};
    byTask = {};
    rows.forEach(function (row, i) {
      byKey[row[COL.run] + "\u0000" + row[COL.key]] = i;
      var task = row[COL.run] + "\u0000" + taskOf(row[COL.key]);
      (byTask[task] = byTask[task] || []).push(i);
    });
  }
  function syncAllOptions() {
    syncOptions("f-run", index.runs);
    syncOptions("f-bench", index.benchmarks);
    syncOptions("f-subset", index.subsets);
    syncOptions("f-error", index.error_kinds || []);
  }
  // The runs shown, with counts from the list (the served page only: #run-list).
  function renderRuns() {
    var holder = document.getElementById("run-list");
    if (!holder || !index.run_info) return;
    var counts = index.runs.map(function () { return [0, 0, 0]; });
    rows.forEach(function (row) { counts[row[COL.run]][row[COL.outcome]] += 1; });
    var table = el("table", "runs");
    var head = el("tr");
    ["run", "model", "state", "records", "passed", "failed", "errors", "folder"]
      .forEach(function (name) { head.appendChild(el("th", null, name)); });
    table.appendChild(head);
    index.run_info.forEach(function (run) {
      var r = index.runs.indexOf(run.name), c = counts[r] || [0, 0, 0];
      var tr = el("tr"), name = el("td"), link = el("a", null, run.name);
      link.href = "#run=" + encodeURIComponent(run.name);
      name.appendChild(link);
      tr.appendChild(name);
      [run.model, run.state, c[0] + c[1] + c[2], c[1], c[0], c[2], run.folder]
        .forEach(function (value, n) {
          tr.appendChild(el("td", n >= 2 && n <= 5 ? "num" : null, value));
        });
      table.appendChild(tr);
    });
    holder.replaceChildren(table);
  }
  // Merges rows that changed since the last poll (a retried record replaces its row).
  function merge(change) {
    ["runs", "benchmarks", "subsets", "error_kinds", "run_info"].forEach(function (name) {
      if (change[name]) index[name] = change[name];
    });
    var openKey = current >= 0 ? rows[current][COL.run] + "\u0000" + rows[current][COL.key] : null;
    change.rows.forEach(function (row) {
      var at = byKey[row[COL.run] + "\u0000" + row[COL.key]];
      if (at === undefined) {
        byKey[row[COL.run] + "\u0000" + row[COL.key]] = rows.length;
        rows.push(row);
      } else {
        rows[at] = row;
      }
    });
    rows.sort(rowCompare);
    indexRows();
    if (openKey !== null) current = byKey[openKey];
    syncAllOptions();
    applyFilters();
    renderRuns();
    if (current < 0 && filtered.length) open(filtered[0], null, false);
  }
  function poll(version) {
    var status = document.getElementById("live");
    source.changes(version).then(function (change) {
      if (change.reload) { location.reload(); return; }  // the server dropped rows: start over
      if (change.rows.length) merge(change);
      index.run_info = change.run_info;
      renderRuns();
      if (status) {
        status.textContent = "live · " + rows.length + " records · checked " +
          new Date().toLocaleTimeString();
      }
      document.body.setAttribute("data-version", String(change.version));
      setTimeout(function () { poll(change.version); }, 2000);
    }, function (error) {
      if (status) status.textContent = "the viewer's server does not answer (" + error + ")";
      setTimeout(function () { poll(version); }, 5000);
    });
  }

  // j / k open the next / previous sample of the list (not while typing in a field).
  function stepWithKeys(event) {
    var target = event.target, tag = target && target.tagName;
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
    var step = event.key === "j" ? 1 : event.key === "k" ? -1 : 0;
    if (!step || !filtered.length) return;
    var at = filtered.indexOf(current);
    var next = at < 0 ? 0 : Math.min(filtered.length - 1, Math.max(0, at + step));
    if (filtered[next] !== current) open(filtered[next], partner, true);
  }

  function start(data) {
    index = data;
    rows = index.rows;
    PAGE = index.page_size;
    indexRows();
    syncAllOptions();
    FILTERS.forEach(function (filter) {
      var input = control(filter[0]);
      if (input) input.addEventListener(filter[0] === "f-text" ? "input" : "change", filterChanged);
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
    document.addEventListener("keydown", stepWithKeys);
    renderRuns();
    var linked = fromHash();
    if (linked) document.getElementById("samples").scrollIntoView();
    if (source.live) poll(index.version);
    return linked || (filtered.length ? open(filtered[0], null, false) : null);
  }
  baselineChooser();
  source.index().then(start).then(function () {
    document.body.setAttribute("data-ready", String(Math.round(performance.now())));
  }, function (error) {
    document.getElementById("detail").textContent = "The samples could not be read: " + error;
    document.body.setAttribute("data-ready", "error");
  });
})();
