// The auditors' page (scheduler/rest/page.py inlines this file). Plain DOM, no framework:
// data comes from the page-data element (and /ui/state when live), text is set with
// textContent only, so nothing a trace or a configuration names is ever parsed as HTML.
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("page-data").textContent);
  var SVG = "http://www.w3.org/2000/svg";
  var app = document.getElementById("app");
  var current = { step: 0 };

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") node.textContent = attrs[k];
      else if (k === "cls") node.className = attrs[k];
      else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { if (c) node.appendChild(c); });
    return node;
  }
  function svg(tag, attrs) {
    var node = document.createElementNS(SVG, tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") node.textContent = attrs[k];
      else node.setAttribute(k, attrs[k]);
    });
    return node;
  }
  function res(r) {
    if (!r) return "-";
    var keys = Object.keys(r).sort();
    return keys.length ? keys.map(function (k) { return k + "=" + r[k]; }).join(" ") : "0";
  }

  // ---- lifecycle diagrams (laid out by dagre, drawn here) --------------------------
  var CHAR = 7.2;
  function edgeClass(e) {
    if (e.dormant) return "dormant";
    if (e.count === null || e.count === undefined) return "declared";
    return e.count > 0 ? "fired" : "never";
  }
  function edgeLabel(e) {
    if (e.dormant) return e.trigger + " (dormant)";
    if (e.count === null || e.count === undefined) return e.trigger;
    return e.count > 0 ? e.trigger + " \u00d7" + e.count : e.trigger + " (never fired)";
  }
  function drawLifecycle(lc) {
    var g = new dagre.graphlib.Graph({ multigraph: true });
    g.setGraph({ rankdir: "LR", nodesep: 28, ranksep: 70, edgesep: 14, marginx: 10, marginy: 10 });
    g.setDefaultEdgeLabel(function () { return {}; });
    g.setNode("__start", { width: 12, height: 12 });
    lc.states.forEach(function (s) {
      g.setNode(s.name, { width: Math.max(90, s.name.length * CHAR + 56), height: 40 });
    });
    g.setEdge("__start", lc.initial, { width: 1, height: 1 }, "__start");
    lc.edges.forEach(function (e, i) {
      var label = edgeLabel(e);
      g.setEdge(e.source, e.dest, { label: label, width: label.length * 6.2 + 6, height: 14,
                                    labelpos: "c", index: i }, e.trigger + "#" + i);
    });
    dagre.layout(g);
    var box = g.graph();
    var root = svg("svg", { width: "100%", style: "max-width:" + Math.ceil(box.width) + "px",
                            viewBox: "0 0 " + Math.ceil(box.width) + " " + Math.ceil(box.height),
                            "class": "diagram", role: "img",
                            "aria-label": "the " + lc.name + " lifecycle" });
    var defs = svg("defs");
    ["fired", "never", "dormant", "declared"].forEach(function (kind) {
      var m = svg("marker", { id: "arrow-" + lc.name + "-" + kind, viewBox: "0 0 10 10",
                              refX: "9", refY: "5", markerWidth: "7", markerHeight: "7",
                              orient: "auto-start-reverse" });
      m.appendChild(svg("path", { d: "M0,0 L10,5 L0,10 z", "class": "head " + kind }));
      defs.appendChild(m);
    });
    root.appendChild(defs);
    g.edges().forEach(function (ref) {
      var lab = g.edge(ref);
      var pts = lab.points;
      var d = "M" + pts[0].x + "," + pts[0].y;
      for (var i = 1; i < pts.length; i++) d += " L" + pts[i].x + "," + pts[i].y;
      if (ref.v === "__start") {
        root.appendChild(svg("path", { d: d, "class": "edge start",
                                       "marker-end": "url(#arrow-" + lc.name + "-declared)" }));
        return;
      }
      var e = lc.edges[lab.index];
      var kind = edgeClass(e);
      var group = svg("g", { "class": "edge-group", "data-trigger": e.trigger,
                             "data-source": e.source, "data-dest": e.dest, "data-kind": kind });
      var path = svg("path", { d: d, "class": "edge " + kind,
                               "marker-end": "url(#arrow-" + lc.name + "-" + kind + ")" });
      path.appendChild(svg("title", { text: e.source + " --" + e.trigger + "--> " + e.dest +
                                      (e.dormant ? "\ndormant: " + e.dormant : "") }));
      group.appendChild(path);
      group.appendChild(svg("text", { x: lab.x, y: lab.y + 4, "class": "edge-label " + kind,
                                      "text-anchor": "middle", text: lab.label }));
      root.appendChild(group);
    });
    var start = g.node("__start");
    root.appendChild(svg("circle", { cx: start.x, cy: start.y, r: 5, "class": "start-dot" }));
    lc.states.forEach(function (s) {
      var n = g.node(s.name);
      var group = svg("g", { "class": "state" + (s.final ? " final" : ""), "data-state": s.name });
      var x = n.x - n.width / 2, y = n.y - n.height / 2;
      group.appendChild(svg("rect", { x: x, y: y, width: n.width, height: n.height, rx: 9 }));
      if (s.final) {
        group.appendChild(svg("rect", { x: x + 3, y: y + 3, width: n.width - 6,
                                        height: n.height - 6, rx: 7, "class": "inner" }));
      }
      group.appendChild(svg("text", { x: n.x - 14, y: n.y + 4, "text-anchor": "middle",
                                      "class": "state-name", text: s.name }));
      group.appendChild(svg("text", { x: x + n.width - 10, y: n.y + 4, "text-anchor": "end",
                                      "class": "state-count", text: "" }));
      var tip = svg("title", { text: s.name + ": " + s.doc });
      group.appendChild(tip);
      root.appendChild(group);
    });
    return root;
  }
  function setCounts(counts) {
    DATA.lifecycles.forEach(function (lc) {
      var section = document.querySelector('[data-lifecycle="' + lc.name + '"]');
      if (!section) return;
      var mine = counts ? counts[lc.name] || {} : null;
      section.querySelectorAll("g.state").forEach(function (g) {
        var text = g.querySelector(".state-count");
        if (mine === null) { text.textContent = ""; return; }
        var n = mine[g.getAttribute("data-state")] || 0;
        text.textContent = String(n);
        g.classList.toggle("empty", n === 0);
      });
    });
  }
  function legend() {
    var items = [];
    if (DATA.mode === "coverage") {
      items.push(["fired", "fired: trigger \u00d7 times in the report"]);
      items.push(["never", "never fired in the report"]);
    } else {
      items.push(["declared", "declared edge"]);
    }
    items.push(["dormant", "dormant: declared, never fired by design (hover for why)"]);
    var list = el("ul", { cls: "legend", id: "legend" });
    items.forEach(function (item) {
      var sample = svg("svg", { width: 46, height: 12 });
      sample.appendChild(svg("line", { x1: 2, y1: 6, x2: 44, y2: 6, "class": "edge " + item[0] }));
      var li = el("li", {}, []);
      li.appendChild(sample);
      li.appendChild(el("span", { text: item[1] }));
      list.appendChild(li);
    });
    if (DATA.mode !== "coverage") {
      list.appendChild(el("li", { text: DATA.mode === "live"
        ? "number in a state: objects the core holds in it now (grey: none)"
        : "number in a state: objects in it after the selected step (grey: none)" }));
    }
    list.appendChild(el("li", { text: "double border: a final state; dot: where an object starts" }));
    return list;
  }
  function lifecycleView() {
    var view = el("section", { id: "view-lifecycles", cls: "view" }, [legend()]);
    DATA.lifecycles.forEach(function (lc) {
      var section = el("section", { cls: "lifecycle", "data-lifecycle": lc.name }, [
        el("h2", { text: lc.name }), el("p", { cls: "doc", text: lc.description })]);
      section.appendChild(drawLifecycle(lc));
      view.appendChild(section);
    });
    return view;
  }

  // ---- queue tree, applications, nodes ---------------------------------------------
  function usageBar(q) {
    var cell = el("td", { cls: "usage" });
    if (!q.max) { cell.textContent = "no max"; return cell; }
    Object.keys(q.max).sort().forEach(function (k) {
      var used = (q.allocated && q.allocated[k]) || 0;
      var pct = q.max[k] > 0 ? Math.min(100, Math.round(100 * used / q.max[k])) : 100;
      var bar = el("div", { cls: "bar", title: k + ": " + used + " of " + q.max[k] }, [
        el("div", { cls: "fill" + (used > q.max[k] ? " over" : ""), style: "width:" + pct + "%" })]);
      cell.appendChild(el("div", { cls: "bar-row" }, [el("span", { text: k + " " + pct + "%" }), bar]));
    });
    return cell;
  }
  function queueRows(body, q, depth) {
    var row = el("tr", { cls: "queue " + q.state.toLowerCase(), "data-queue": q.path }, [
      el("td", { cls: "qname", style: "padding-left:" + (6 + depth * 18) + "px",
                 text: q.name + (q.leaf ? "" : "/") + (q.managed ? "" : " (dynamic)") }),
      el("td", { text: q.state }),
      el("td", { text: q.running + " / " + q.apps }),
      el("td", { cls: "allocated", text: res(q.allocated) }),
      el("td", { text: res(q.pending) }),
      el("td", { text: res(q.guaranteed) }),
      el("td", { text: res(q.max) }),
      usageBar(q)]);
    body.appendChild(row);
    q.children.forEach(function (c) { queueRows(body, c, depth + 1); });
  }
  function table(headers, cls) {
    var t = el("table", { cls: cls || "" }, [el("thead", {}, [el("tr", {}, headers.map(
      function (h) { return el("th", { text: h }); }))])]);
    var body = el("tbody");
    t.appendChild(body);
    return [t, body];
  }
  function suspects() {
    var words = {};
    (DATA.violations || []).forEach(function (v) {
      String(v.subject || "").split(/[\s,()]+/).forEach(function (w) { if (w) words[w] = true; });
    });
    return words;
  }
  function partitionsView(partitions, highlight) {
    var box = el("div", { cls: "partitions" });
    if (!partitions.length) box.appendChild(el("p", { cls: "empty-note", text: "No RM registered." }));
    partitions.forEach(function (p) {
      var sec = el("section", { cls: "partition", "data-partition": p.name }, [
        el("h3", { text: "partition " + p.name + " of " + p.rm + " (" + p.state + ")" }),
        el("p", { text: "capacity " + res(p.capacity) + "; allocated " + res(p.allocated) })]);
      var q = table(["queue", "state", "running / own apps", "allocated", "pending", "guaranteed",
                     "max", "used of max"], "queues");
      if (p.root) queueRows(q[1], p.root, 0);
      sec.appendChild(el("h4", { text: "Queues" }));
      sec.appendChild(q[0]);
      var a = table(["application", "state", "queue", "allocated", "pending", "asks", "allocations"], "apps");
      p.apps.forEach(function (x) {
        var asks = x.asks.map(function (k) {
          return k.key + (k.placeholder ? " (ph)" : "") + ": " + k.state + (k.repeats ? " \u00d7" + k.repeats : "");
        }).join("; ");
        var allocs = x.allocations.map(function (y) {
          return y.key + (y.placeholder ? " (ph)" : "") + "@" + y.node + ": " + y.state;
        }).join("; ");
        a[1].appendChild(el("tr", { "data-app": x.id, cls: highlight[x.id] ? "suspect" : "" }, [
          el("td", { text: x.id }), el("td", { text: x.state }), el("td", { text: x.queue }),
          el("td", { text: res(x.allocated) }), el("td", { text: res(x.pending) }),
          el("td", { text: asks || "-" }), el("td", { text: allocs || "-" })]));
      });
      sec.appendChild(el("h4", { text: "Applications" }));
      sec.appendChild(p.apps.length ? a[0] : el("p", { cls: "empty-note", text: "none" }));
      var n = table(["node", "state", "capacity", "allocated", "available"], "nodes");
      p.nodes.forEach(function (x) {
        n[1].appendChild(el("tr", { "data-node": x.id, cls: highlight[x.id] ? "suspect" : "" }, [
          el("td", { text: x.id }), el("td", { text: x.state }), el("td", { text: res(x.capacity) }),
          el("td", { text: res(x.allocated) }), el("td", { text: res(x.available) })]));
      });
      sec.appendChild(el("h4", { text: "Nodes" }));
      sec.appendChild(p.nodes.length ? n[0] : el("p", { cls: "empty-note", text: "none" }));
      box.appendChild(sec);
    });
    return box;
  }

  // ---- trace viewer ----------------------------------------------------------------
  function banner() {
    var v = DATA.verdict;
    var box = el("div", { cls: "banner" + (DATA.violations.length ? " broken" : " held"), id: "verdict" }, [
      el("span", { cls: "verdict", text: v.summary })]);
    if (v.step) {
      var go = el("button", { type: "button", id: "goto-violation", text: "show step " + v.step });
      go.addEventListener("click", function () { select(v.step); });
      box.appendChild(go);
    }
    return box;
  }
  function violationBox() {
    var box = el("div", { cls: "violation", id: "violation", role: "alert" });
    box.appendChild(el("p", { cls: "verdict", text: "Broken after this step:" }));
    DATA.violations.forEach(function (r) {
      box.appendChild(el("div", { cls: "rule", "data-rule": r.invariant }, [
        el("strong", { cls: "rule-name", text: r.invariant }),
        el("span", { text: " on " + r.subject + ": " + r.explanation }),
        r.statement ? el("p", { cls: "statement", text: r.statement }) : null]));
    });
    return box;
  }
  function traceView() {
    var steps = DATA.steps;
    var view = el("section", { id: "view-trace", cls: "view" });
    var controls = el("div", { cls: "controls" }, [
      el("button", { id: "prev", text: "\u2190 previous", type: "button" }),
      el("span", { id: "position" }),
      el("button", { id: "next", text: "next \u2192", type: "button" }),
      el("span", { cls: "hint", text: "(arrow keys step too)" })]);
    view.appendChild(controls);
    view.appendChild(banner());
    var traffic = el("ol", { id: "traffic", cls: "traffic" });
    steps.forEach(function (s, i) {
      var li = el("li", { cls: "step" + (DATA.verdict.step === i + 1 ? " violating" : ""),
                          "data-step": String(i + 1), tabindex: "0" }, [
        el("div", { cls: "request", text: s.text })]);
      s.answers.forEach(function (a) { li.appendChild(el("div", { cls: "answer", text: "\u2190 " + a })); });
      li.addEventListener("click", function () { select(i + 1); });
      traffic.appendChild(li);
    });
    var state = el("div", { id: "state", cls: "state-panel" });
    view.appendChild(el("div", { cls: "columns" }, [
      el("div", { cls: "column" }, [el("h2", { text: "SI traffic" }), traffic]),
      el("div", { cls: "column" }, [el("h2", { id: "state-title", text: "State" }), state])]));
    return view;
  }
  function countsChips(counts) {
    var box = el("div", { cls: "chips" });
    Object.keys(counts).sort().forEach(function (lc) {
      var parts = Object.keys(counts[lc]).sort().map(function (s) { return s + " " + counts[lc][s]; });
      if (parts.length) box.appendChild(el("span", { cls: "chip", text: lc + ": " + parts.join(", ") }));
    });
    return box;
  }
  function select(n) {
    var steps = DATA.steps;
    if (!steps.length) return;
    n = Math.max(1, Math.min(steps.length, n));
    current.step = n;
    document.querySelectorAll("#traffic li.step").forEach(function (li) {
      li.classList.toggle("selected", li.getAttribute("data-step") === String(n));
    });
    var chosen = document.querySelector('#traffic li[data-step="' + n + '"]');
    if (chosen && chosen.scrollIntoView) chosen.scrollIntoView({ block: "nearest" });
    document.getElementById("position").textContent = "step " + n + " of " + steps.length;
    document.getElementById("state-title").textContent = "State after step " + n;
    var panel = document.getElementById("state");
    panel.textContent = "";
    var s = steps[n - 1].state;
    if (DATA.verdict.step === n) panel.appendChild(violationBox());
    panel.appendChild(countsChips(s.counts));
    panel.appendChild(partitionsView(s.partitions, DATA.verdict.step === n ? suspects() : {}));
    setCounts(s.counts);
    var queues = document.getElementById("view-queues");
    if (queues) { queues.textContent = ""; queues.appendChild(el("p", { cls: "doc", text: "after step " + n })); queues.appendChild(partitionsView(s.partitions, {})); }
  }

  // ---- coverage goals --------------------------------------------------------------
  function goalsView() {
    var view = el("section", { id: "view-goals", cls: "view" }, [
      el("p", { text: DATA.cases + " cases, " + DATA.steps + " steps" })]);
    var t = table(["goal", "reached", "statement"], "goals");
    DATA.goals.forEach(function (g) {
      t[1].appendChild(el("tr", { cls: g.count ? "" : "never" }, [
        el("td", { text: g.name }), el("td", { text: String(g.count) }), el("td", { text: g.statement })]));
    });
    view.appendChild(t[0]);
    return view;
  }

  // ---- the page --------------------------------------------------------------------
  function show(name) {
    document.querySelectorAll(".view").forEach(function (v) { v.hidden = v.id !== "view-" + name; });
    document.querySelectorAll("nav button").forEach(function (b) {
      b.classList.toggle("active", b.getAttribute("data-view") === name);
    });
  }
  function build() {
    var tabs = [["lifecycles", "Lifecycles"]];
    if (DATA.mode === "live") tabs.push(["queues", "Queues"]);
    if (DATA.mode === "trace") tabs.unshift(["trace", "Trace"]), tabs.push(["queues", "Queues"]);
    if (DATA.mode === "coverage") tabs.push(["goals", "Goals"]);
    var nav = el("nav", {}, tabs.map(function (t) {
      var b = el("button", { type: "button", "data-view": t[0], text: t[1] });
      b.addEventListener("click", function () { show(t[0]); });
      return b;
    }));
    app.appendChild(el("header", {}, [el("h1", { text: DATA.title }),
                                      el("span", { id: "status", cls: "status" }), nav]));
    if (DATA.mode === "trace") app.appendChild(traceView());
    app.appendChild(lifecycleView());
    if (DATA.mode === "live") {
      app.appendChild(el("section", { id: "view-queues", cls: "view" }, [partitionsView(DATA.state.partitions, {})]));
    }
    if (DATA.mode === "trace") app.appendChild(el("section", { id: "view-queues", cls: "view" }));
    if (DATA.mode === "coverage") app.appendChild(goalsView());
    show(tabs[0][0]);
    if (DATA.mode === "live") { setCounts(DATA.state.counts); liveStatus(DATA.state, null); poll(); }
    if (DATA.mode === "coverage") setCounts(null);
    if (DATA.mode === "trace") {
      document.getElementById("prev").addEventListener("click", function () { select(current.step - 1); });
      document.getElementById("next").addEventListener("click", function () { select(current.step + 1); });
      document.addEventListener("keydown", function (e) {
        if (e.key === "ArrowLeft") select(current.step - 1);
        if (e.key === "ArrowRight") select(current.step + 1);
      });
      select(DATA.verdict.step || 1);
    }
    document.body.setAttribute("data-ready", DATA.mode);
  }
  function liveStatus(state, err) {
    var s = document.getElementById("status");
    s.textContent = err ? "not updated: " + err : "core clock " + state.now.toFixed(1) + " s";
    s.classList.toggle("stale", !!err);
  }
  function poll() {
    setTimeout(function () {
      fetch(DATA.refresh, { cache: "no-store" }).then(function (r) {
        if (!r.ok) throw new Error("HTTP " + r.status);
        return r.json();
      }).then(function (state) {
        DATA.state = state;
        setCounts(state.counts);
        var queues = document.getElementById("view-queues");
        queues.textContent = "";
        queues.appendChild(partitionsView(state.partitions, {}));
        liveStatus(state, null);
        document.body.setAttribute("data-refreshed", String(state.now));
      }).catch(function (e) { liveStatus(null, e.message); }).then(poll);
    }, DATA.interval_ms);
  }
  build();
})();
