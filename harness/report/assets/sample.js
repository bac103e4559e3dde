// One sample's page: SampleView.render(detail, context) draws the value that
// harness/report/detail.py:sample_detail builds (input, tools, gold, explanation,
// transcript, score details; usage and costs only where not zero). It writes text
// with textContent only (never innerHTML), so no text from a record can become markup.
// Any page that has such a value can draw it (the report's sample viewer does).
var SampleView = (function () {
  "use strict";
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
  function toolName(tool) {
    var fn = tool && tool["function"] ? tool["function"] : tool || {};
    return String(fn.name || "?");
  }
  // The sample's input as the run kept it: first messages (a system prompt folded),
  // the tools by name (each schema one click away) and the benchmark's gold.
  function renderInput(data) {
    var part = section("input", true);
    part.className = "input";
    var input = data.input;
    if (!input) {
      part.appendChild(el("p", "note", data.input_note || "input not kept by this run"));
      return [part];
    }
    var messages = input.messages || [];
    if (!messages.length) {
      // The benchmark's user speaks first (a scripted or replayed user): its first
      // turn is the question, recorded at the top of the transcript.
      var first = ((data.trajectory || {}).messages || []).filter(function (m) {
        return m && m.role === "user";
      })[0];
      part.appendChild(el("p", "note", first ? "first user turn (from the transcript):" :
        "no first messages: the conversation is in the transcript"));
      if (first) part.appendChild(renderMessage(first, "u0"));
    }
    messages.forEach(function (message, n) {
      if (message && message.role === "system") {
        var text = textOf(message.content);
        var system = section("system prompt (" + text.length + " characters)", false);
        system.className = "system-prompt";
        system.appendChild(el("pre", null, text));
        part.appendChild(system);
      } else {
        part.appendChild(renderMessage(message || {}, "in" + n));
      }
    });
    var parts = [part];
    var tools = input.tools || [];
    var toolsPart = section("tools (" + tools.length + ")", true);
    toolsPart.className = "tools";
    var names = el("div", "tool-names");
    tools.forEach(function (tool) {
      var one = section(toolName(tool), false);
      one.className = "tool";
      var fn = tool && tool["function"] ? tool["function"] : tool || {};
      if (fn.description) one.appendChild(el("p", "note", fn.description));
      one.appendChild(el("pre", null, pretty(fn.parameters === undefined ? tool : fn.parameters)));
      names.appendChild(one);
    });
    if (!tools.length) names.appendChild(el("span", "note", "no tools offered"));
    toolsPart.appendChild(names);
    parts.push(toolsPart);
    var gold = input.gold || {};
    var goldPart = section("gold (what the benchmark expects)", true);
    goldPart.className = "gold";
    var keys = Object.keys(gold);
    if (!keys.length) goldPart.appendChild(el("p", "note", "the benchmark shows no gold"));
    keys.forEach(function (k) {
      goldPart.appendChild(el("div", "role", k));
      var value = gold[k];
      if (Array.isArray(value) && value.every(function (v) { return typeof v === "string"; })) {
        var list = el("ol");
        value.forEach(function (v) { list.appendChild(el("li", null, v)); });
        goldPart.appendChild(list);
      } else if (isRecordList(value)) {
        var wrap = el("div", "scroll");
        wrap.appendChild(recordTable(value));
        goldPart.appendChild(wrap);
      } else {
        goldPart.appendChild(el("pre", null, pretty(value)));
      }
    });
    parts.push(goldPart);
    return parts;
  }
  function renderExplanation(data, outcome) {
    if (!data.explanation && !data.error_code) return null;
    var box = el("div", "explanation " + (outcome || ""));
    var head = el("div", "role", outcome === "pass" ? "note" : "why it failed");
    if (data.error_code) head.appendChild(el("span", "badge code", String(data.error_code)));
    box.appendChild(head);
    if (data.explanation) box.appendChild(el("pre", null, data.explanation));
    return box;
  }
  // context: {title, outcome ("pass", "fail" or "error")}.
  function render(data, context) {
    context = context || {};
    var pane = el("div", "pane");
    var traj = data.trajectory || {};
    pane.appendChild(el("h3", null, context.title || ""));
    var score = data.score || {};
    var counts = data.counts || {};
    var calls = counts["tool calls made"];
    var run = counts["tool calls run"];
    pane.appendChild(keyValues([
      ["outcome", context.outcome],
      ["status", data.status], ["passed", score.passed], ["reward", score.reward],
      ["progress", score.progress === null ? undefined : score.progress],
      ["tool TP/FP/FN", score.tool_tp === undefined ||
        score.tool_tp === null ? undefined : score.tool_tp + " / " + score.tool_fp + " / " +
        score.tool_fn],
      ["termination", traj.termination],
      ["model replies", counts["model replies"]],
      ["tool calls", calls === undefined ? traj.tool_calls :
        calls + (run !== calls ? " (" + run + " run)" : "")],
      ["tool errors", counts["tool errors"] ? counts["tool errors"] : undefined],
      ["latency (s)", data.latency_s],
      ["score error", data.score_error || undefined], ["note", data.note]
    ]));
    var why = renderExplanation(data, context.outcome);
    if (why) pane.appendChild(why);
    if (data.error) {
      var error = section(
        "error: " + (data.error.type || "") + ": " + (data.error.message || ""), true);
      error.appendChild(el("pre", null, data.error.traceback || ""));
      pane.appendChild(error);
    }
    renderInput(data).forEach(function (part) { pane.appendChild(part); });
    var messages = traj.messages || [];
    var transcript = section("transcript (" + messages.length + " messages)", true);
    transcript.className = "transcript";
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
      if (name === "wall_time_s") return;  // the latency above says it
      var part = section("extra — " + name, /rehears|memory|phase/i.test(name));
      part.appendChild(el("pre", null, pretty(value)));
      pane.appendChild(part);
    });
    [["usage by role", traj.usage], ["parsed assistant turns", traj.turns],
     ["final state", traj.final_state], ["metadata", data.metadata]].forEach(function (pair) {
      if (pair[1] === undefined || pair[1] === null) return;
      var part = section(pair[0], false);
      part.appendChild(el("pre", null, pretty(pair[1])));
      pane.appendChild(part);
    });
    return pane;
  }

  return {render: render, el: el, pretty: pretty, textOf: textOf};
})();
