// scratch ui: the overview's charts (uPlot, from the page's own JSON) and the live poll.
// No inline script runs (the page's CSP forbids it): everything starts here.
"use strict";

function charts() {
  const holder = document.getElementById("charts");
  const block = document.getElementById("chart-data");
  if (!holder || !block || typeof uPlot === "undefined") return;
  const sessions = JSON.parse(block.textContent);
  const width = Math.max(Math.min((holder.clientWidth || 1200) / 2 - 30, 640), 360);
  for (const s of sessions) {
    const box = document.createElement("figure");
    box.className = "chart";
    holder.appendChild(box);
    // cumulative sums change at each call and hold between calls: steps, not slopes
    const step = uPlot.paths && uPlot.paths.stepped ? uPlot.paths.stepped({ align: 1 }) : undefined;
    const opts = {
      title: s.title, width: width, height: 200,
      scales: { x: { time: true }, n: { auto: true } },
      series: [
        {},
        { label: "extracted", stroke: "#1f6feb", width: 2, paths: step },
        { label: "intercepted", stroke: "#2da44e", width: 2, paths: step },
        { label: "refused", stroke: "#cf222e", width: 2, scale: "n", paths: step },
      ],
      axes: [{}, { label: "tokens (cumulative)", size: 70 },
             { side: 1, scale: "n", label: "refused calls", grid: { show: false } }],
    };
    new uPlot(opts, [s.t, s.extracted, s.intercepted, s.refused], box);
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

// A count (data-count: the total when the page was made) stays true as live rows arrive:
// the total, less the rows the page was made with, plus the rows it holds now. A page that
// had none says "No ... match" (data-empty-noun) until its first row arrives.
function counter(body) {
  const span = document.querySelector("[data-count]");
  const made = body.rows.length;
  return function recount() {
    const n = body.rows.length;
    if (span) {
      span.textContent = (Number(span.getAttribute("data-count")) - made + n)
        .toLocaleString("en-US");
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
// and places the rows it is given; the answer says the "after" to ask with next.
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
        }
        after = String(got.after);
      }
    } catch (e) { /* the server is gone for now: ask again */ }
    window.setTimeout(poll, 1000);
  }
  window.setTimeout(poll, 1000);
}

document.addEventListener("DOMContentLoaded", () => { charts(); live(); });
