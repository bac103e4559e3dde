// The sample viewer of the report file and of `harness view` (one sample is drawn by
// SampleView, sample.js). It reads data with JSON.parse and writes it with textContent
// only (never innerHTML), so no text from a record can become markup. Its data come from
// SampleSource (data_source.js): the report's embedded blocks or the viewer's server,
// which also sends new records.
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
