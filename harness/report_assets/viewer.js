// The report's sample viewer. It reads data with JSON.parse and writes it with textContent
// only (never innerHTML), so no text from a record can become markup.
(function () {
  "use strict";
  var index = JSON.parse(document.getElementById("sample-index").textContent);
  var PAGE = index.page_size;
  var OUTCOMES = ["fail", "pass", "error"];
  var rows = index.rows, filtered = [], page = 0, current = -1;
  var byKey = {};
  rows.forEach(function (row, i) { byKey[index.runs[row[0]] + "\u0000" + row[7]] = i; });

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
      if (run !== null && r[0] !== run) continue;
      if (bench !== null && r[1] !== bench) continue;
      if (subset !== null && r[2] !== subset) continue;
      if (outcome !== "" && OUTCOMES[r[5]] !== outcome) continue;
      if (text && r[7].toLowerCase().indexOf(text) < 0) continue;
      filtered.push(i);
    }
    renderList();
  }
  function renderList() {
    var list = document.getElementById("list");
    var pages = Math.max(1, Math.ceil(filtered.length / PAGE));
    page = Math.min(page, pages - 1);
    list.replaceChildren();
    filtered.slice(page * PAGE, page * PAGE + PAGE).forEach(function (i) {
      var r = rows[i];
      var label = (r[5] === 1 ? "PASS " : r[5] === 2 ? "ERR  " : "FAIL ") + index.runs[r[0]] +
        " · " + r[7] + (r[6] === null ? "" : " · reward " + r[6]);
      var button = el("button", OUTCOMES[r[5]] + (i === current ? " current" : ""), label);
      button.title = label;
      button.addEventListener("click", function () { show(i); });
      list.appendChild(button);
    });
    document.getElementById("count").textContent =
      filtered.length + " of " + rows.length + " samples";
    document.getElementById("page").textContent = "page " + (page + 1) + " of " + pages;
  }
  function section(title, open) {
    var details = el("details");
    if (open) details.open = true;
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
  function show(i) {
    current = i;
    var data = JSON.parse(document.getElementById("d" + i).textContent);
    var detail = document.getElementById("detail");
    detail.replaceChildren();
    var traj = data.trajectory || {};
    detail.appendChild(el("h3", null, data.key + "  (" + data.run + ")"));
    var score = data.score || {};
    detail.appendChild(keyValues([
      ["status", data.status], ["passed", score.passed], ["reward", score.reward],
      ["progress", score.progress], ["tool TP/FP/FN", score.tool_tp === undefined ||
        score.tool_tp === null ? undefined : score.tool_tp + " / " + score.tool_fp + " / " +
        score.tool_fn],
      ["termination", traj.termination], ["tool calls", traj.tool_calls],
      ["tool errors", traj.tool_errors], ["latency (s)", data.latency_s],
      ["score error", data.score_error || undefined]
    ]));
    if (data.error) {
      var error = section(
        "error: " + (data.error.type || "") + ": " + (data.error.message || ""), true);
      error.appendChild(el("pre", null, data.error.traceback || ""));
      detail.appendChild(error);
    }
    var extra = traj.extra || {};
    Object.keys(extra).forEach(function (key) {
      var value = extra[key];
      if (key === "rehearsal" && value && typeof value === "object") {
        detail.appendChild(renderRehearsal(value));
        return;
      }
      var open = /rehears|memory|phase/i.test(key);
      var part = section("extra — " + key, open);
      part.appendChild(el("pre", null, pretty(value)));
      detail.appendChild(part);
    });
    var transcript = section("transcript (" + (traj.messages || []).length + " messages)", true);
    var resets = traj.context_resets || [];
    (traj.messages || []).forEach(function (message, n) {
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
    detail.appendChild(transcript);
    var more = [["score details", score.details], ["usage by role", traj.usage],
                ["parsed assistant turns", traj.turns], ["final state", traj.final_state],
                ["metadata", data.metadata]];
    more.forEach(function (pair) {
      if (pair[1] === undefined || pair[1] === null) return;
      var part = section(pair[0], pair[0] === "score details");
      part.appendChild(el("pre", null, pretty(pair[1])));
      detail.appendChild(part);
    });
    renderList();
  }
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
  applyFilters();
  // #sample=<run>/<key> opens that sample; otherwise the first one in the list.
  var wanted = decodeURIComponent(location.hash.replace(/^#sample=/, ""));
  var slash = wanted.indexOf("/");
  var found = slash > 0 ?
    byKey[wanted.slice(0, slash) + "\u0000" + wanted.slice(slash + 1)] : undefined;
  if (found !== undefined) show(found); else if (filtered.length) show(filtered[0]);
})();
