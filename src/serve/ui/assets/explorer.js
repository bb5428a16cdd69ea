// neardup Explorer: the compare box, local times, and opening a member's
// comparison from its link. Text from the server is only ever set with
// textContent, never parsed as HTML.
"use strict";

function element(name, className, text) {
  const node = document.createElement(name);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function drawComparison(form, answer) {
  const result = document.getElementById("compare-result");
  result.replaceChildren();
  const decision = answer && answer.comparison && answer.comparison.decision;
  if (!decision) {
    const reason = answer && answer.error ? answer.error.reason : JSON.stringify(answer);
    result.append(element("p", "apart", form.dataset.failed + ": " + reason));
    return;
  }
  result.append(element("p", decision.joins ? "joins" : "apart",
    (decision.joins ? form.dataset.joins : form.dataset.apart) + " — " + decision.reason));
  const table = element("table", "figures");
  const head = element("tr");
  for (const label of [form.dataset.figure, form.dataset.value, form.dataset.requirement, ""]) {
    head.append(element("th", "", label));
  }
  const thead = element("thead");
  thead.append(head);
  table.append(thead);
  const body = element("tbody");
  for (const figure of decision.figures) {
    const row = element("tr", figure.passes === true ? "pass" : figure.passes === false ? "fail" : "info");
    row.dataset.figure = figure.name;
    const mark = figure.passes === true ? "✓" : figure.passes === false ? "✗" : "·";
    for (const text of [figure.name.replace(/_/g, " "), figure.value, figure.requirement, mark]) {
      row.append(element("td", "", text));
    }
    body.append(row);
  }
  table.append(body);
  result.append(table);
}

function setUpCompare() {
  const form = document.getElementById("compare-form");
  if (!form) return;
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    compare(form);
  });
  // A link can carry the two texts: ?left=…&right=… compares them at once.
  const params = new URLSearchParams(location.search);
  if (params.has("left") && params.has("right")) {
    form.elements.left.value = params.get("left");
    form.elements.right.value = params.get("right");
    compare(form);
  }
}

async function compare(form) {
  const texts = [form.elements.left.value, form.elements.right.value];
  const request = { texts };
  if (form.dataset.index) request.index = form.dataset.index;
  if (document.documentElement.lang.startsWith("zh")) request.lang = "zh";
  try {
    const response = await fetch(form.dataset.endpoint, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(request),
    });
    drawComparison(form, await response.json());
  } catch (error) {
    drawComparison(form, { error: { reason: String(error) } });
  }
}

function localTimes() {
  for (const time of document.querySelectorAll("time[datetime]")) {
    const date = new Date(time.getAttribute("datetime"));
    if (!isNaN(date)) {
      time.title = time.textContent;
      time.textContent = date.toLocaleString(document.documentElement.lang, {
        year: "numeric", month: "2-digit", day: "2-digit",
        hour: "2-digit", minute: "2-digit",
      });
    }
  }
}

function openFromHash() {
  const target = location.hash && document.getElementById(location.hash.slice(1));
  if (target && target.tagName === "DETAILS") target.open = true;
}

document.addEventListener("DOMContentLoaded", () => {
  setUpCompare();
  localTimes();
  openFromHash();
  window.addEventListener("hashchange", openFromHash);
});
