// scratch ui: the charts (uPlot, from the page's own JSON, redrawn as calls arrive) and the
// live poll. No inline script runs (the page's CSP forbids it): everything starts here.
"use strict";

const NUMBER = new Intl.NumberFormat("en-US");

// 1234 -> "1.2k", 5600000 -> "5.6M": axis labels that stay short on a phone
function compact(v) {
  const a = Math.abs(v);
  if (a >= 1e9) return (v / 1e9).toFixed(a >= 1e10 ? 0 : 1) + "G";
  if (a >= 1e6) return (v / 1e6).toFixed(a >= 1e7 ? 0 : 1) + "M";
  if (a >= 1e3) return (v / 1e3).toFixed(a >= 1e4 ? 0 : 1) + "k";
  return String(Math.round(v));
}

function pad(n) { return String(n).padStart(2, "0"); }

// time labels in UTC (the page's times are UTC and say so), as fine as the span needs: two
// ticks never read the same
function timeLabels(u, splits) {
  const span = (u.scales.x.max || 0) - (u.scales.x.min || 0);
  const step = splits.length > 1 ? splits[1] - splits[0] : span;
  return splits.map((s, i) => {
    const d = new Date(s * 1000);
    const hm = pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes());
    const day = (d.getUTCMonth() + 1) + "-" + pad(d.getUTCDate());
    if (step < 1) {
      const digits = step < 0.01 ? 3 : step < 0.1 ? 2 : 1;
      return pad(d.getUTCSeconds()) + "." +
        String(d.getUTCMilliseconds()).padStart(3, "0").slice(0, digits) + "s";
    }
    if (step < 60) return hm + ":" + pad(d.getUTCSeconds());
    if (span < 2 * 86400) return i === 0 ? day + " " + hm : hm;
    return day;
  });
}

function columns(s) {
  return [s.t, s.charged, s.intercepted, s.refused];
}

// charts two a row on a wide screen (one alone takes the row), one a row on a narrow one;
// the figure's border and padding (14 px) come off
function chartWidth(holder) {
  const w = holder.clientWidth || 1200;
  const two = w >= 900 && holder.getAttribute("data-n") !== "1";
  return Math.max(Math.floor(two ? (w - 16) / 2 : Math.min(w, 1100)) - 16, 200);
}

const drawn = [];  // {plot, src, holder, setData}
window.scratchCharts = drawn;  // for the browser tests: the charts as uPlot drew them

function draw(holder, c) {
  const s = c.series;
  const box = document.createElement("figure");
  box.className = "chart";
  const title = document.createElement(c.link ? "a" : "span");
  title.className = "title";
  title.textContent = c.title;
  if (c.link) title.href = c.link;
  box.appendChild(title);
  holder.appendChild(box);
  const step = uPlot.paths && uPlot.paths.stepped ? uPlot.paths.stepped({ align: 1 }) : undefined;
  let data = s;
  const opts = {
    width: chartWidth(holder), height: 220,
    tzDate: ts => uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC"),
    scales: { x: { time: true }, tok: { auto: true }, int: { auto: true } },
    legend: { live: true },
    cursor: { points: { size: 7 } },
    series: [
      { label: "time (UTC)", value: (u, v) => v == null ? "--" :
          new Date(v * 1000).toISOString().slice(0, 19).replace("T", " ") },
      { label: "charged", scale: "tok", stroke: "#1f6feb", width: 2, paths: step,
        fill: "rgba(31,111,235,0.08)",
        value: (u, v, si, i) => {
          if (v == null) return "--";
          const d = data;
          const call = i != null && d.seq[i] != null ?
            " (#" + d.seq[i] + " " + d.command[i] + " +" + NUMBER.format(d.tokens[i]) + ")" : "";
          return NUMBER.format(v) + call;
        } },
      { label: "intercepted", scale: "int", stroke: "#2da44e", width: 1.5, dash: [6, 4],
        paths: step, value: (u, v) => v == null ? "--" : NUMBER.format(v) },
      { label: "refused", scale: "tok", stroke: "#cf222e", fill: "#cf222e", width: 0,
        paths: () => null, points: { show: true, size: 9, width: 1, fill: "#cf222e" },
        value: (u, v) => v == null ? "--" : "refused here" },
    ],
    axes: [
      { values: timeLabels, space: 70, label: "time (UTC)", labelSize: 18 },
      { scale: "tok", label: "tokens charged", values: (u, sp) => sp.map(compact), size: 50,
        labelSize: 18 },
      { scale: "int", side: 1, label: "intercepted", values: (u, sp) => sp.map(compact),
        size: 50, labelSize: 18, grid: { show: false }, stroke: "#2da44e" },
    ],
  };
  const plot = new uPlot(opts, columns(s), box);
  box.setAttribute("data-points", String(s.t.length));
  plot.over.addEventListener("click", () => {  // a point opens its call
    const i = plot.cursor.idx;
    if (i != null && data.seq[i] != null && c.base)
      window.location.href = c.base + "a/" + encodeURIComponent(c.agent) + "/c/" +
        data.seq[i];
  });
  const entry = { plot: plot, src: c.src, holder: holder,
                  setData: d => {
                    data = d;
                    plot.setData(columns(d));
                    box.setAttribute("data-points", String(d.t.length));
                  } };
  drawn.push(entry);
}

function charts() {
  if (typeof uPlot === "undefined") return;
  for (const holder of document.querySelectorAll("[data-charts]")) {
    const block = document.getElementById(holder.getAttribute("data-charts"));
    if (!block) continue;
    const list = JSON.parse(block.textContent);
    holder.setAttribute("data-n", String(list.length));
    for (const c of list) draw(holder, c);
  }
  let pending = null;
  window.addEventListener("resize", () => {
    window.clearTimeout(pending);
    pending = window.setTimeout(() => {
      for (const d of drawn) d.plot.setSize({ width: chartWidth(d.holder), height: 220 });
    }, 150);
  });
}

// the charts drawn again from their series (new calls came): each asks its own URL
async function redraw() {
  for (const d of drawn) {
    if (!d.src) continue;
    try {
      const answer = await fetch(new URL(d.src, window.location.href),
                                 { headers: { "Accept": "application/json" } });
      if (answer.ok) d.setData((await answer.json()).series);
    } catch (e) { /* the server is gone for now */ }
  }
}

// New rows into a live table: at the end, or the top with data-order="newest-first"; a row
// whose data-key is there already (an entry's new version) replaces it.
function place(grid, body, html) {
  const holder = document.createElement("tbody");
  holder.innerHTML = html;  // rows built and escaped by the server
  const first = grid.getAttribute("data-order") === "newest-first";
  for (const row of [...holder.rows]) {
    const key = row.getAttribute("data-key");
    const old = key ? [...body.rows].find(r => r.getAttribute("data-key") === key) : null;
    if (old) old.remove();
    if (first) body.insertBefore(row, body.firstChild);
    else body.appendChild(row);
  }
}

// A count (data-count: the total when the page was made; data-one, data-many: its noun)
// stays true as live rows arrive: the total, less the rows the page was made with, plus the
// rows it holds now. A page that
// had none says "No ... match" (data-empty-noun) until its first row arrives.
function counter(body) {
  const span = document.querySelector("[data-count]");
  const made = body.rows.length;
  return function recount() {
    const n = body.rows.length;
    if (span) {
      const total = Number(span.getAttribute("data-count")) - made + n;
      span.textContent = total.toLocaleString("en-US") + " " +
        span.getAttribute(total === 1 ? "data-one" : "data-many");
      return;
    }
    const empty = document.querySelector("[data-empty-noun]");
    if (empty && n) {
      empty.textContent = n.toLocaleString("en-US") + " " +
        empty.getAttribute("data-empty-noun") + ".";
      empty.className = "summary";
    }
  };
}

// A table with data-live="URL" asks URL, every second, for what came after data-after (its
// last call's seq; over every agent "agent:seq,..."; for entries, the newest update time)
// and places the rows it is given; the answer says the "after" to ask with next. New calls
// draw the page's charts again.
function live() {
  const grid = document.querySelector("[data-live]");
  if (!grid) return;
  const body = grid.querySelector("tbody");
  const url = new URL(grid.getAttribute("data-live"), window.location.href);
  let after = grid.getAttribute("data-after") || "";
  const recount = counter(body);
  async function poll() {
    try {
      url.searchParams.set("after", after);
      const answer = await fetch(url, { headers: { "Accept": "application/json" } });
      if (answer.ok) {
        const got = await answer.json();
        if (got.rows) {
          place(grid, body, got.rows);
          recount();
          await redraw();
        }
        after = String(got.after);
      }
    } catch (e) { /* the server is gone for now: ask again */ }
    window.setTimeout(poll, 1000);
  }
  window.setTimeout(poll, 1000);
}

document.addEventListener("DOMContentLoaded", () => { charts(); live(); });
