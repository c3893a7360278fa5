(function () {
  "use strict";
  var table = document.getElementById("targets");
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var texts = rows.map(function (r) { return r.textContent.toLowerCase(); });
  var filter = document.getElementById("filter");
  var outcome = document.getElementById("outcome");
  var count = document.getElementById("shown");

  function apply() {
    var q = filter.value.trim().toLowerCase();
    var o = outcome.value;
    var n = 0;
    rows.forEach(function (r, i) {
      var ok = (!o || r.getAttribute("data-outcome") === o) &&
        (!q || texts[i].indexOf(q) >= 0);
      r.hidden = !ok;
      if (ok) { n += 1; }
    });
    count.textContent = n + " of " + rows.length + " targets shown";
  }
  filter.addEventListener("input", apply);
  outcome.addEventListener("change", apply);

  var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
  var sorted = { col: -1, dir: 1 };
  heads.forEach(function (th, col) {
    var button = th.querySelector("button");
    if (!button) { return; }
    var numeric = th.getAttribute("data-type") === "num";
    button.addEventListener("click", function () {
      // numbers sort largest first on the first click, names A to Z
      var dir = sorted.col === col ? -sorted.dir : (numeric ? -1 : 1);
      sorted = { col: col, dir: dir };
      var order = rows.map(function (r, i) { return i; });
      order.sort(function (a, b) {
        var x = rows[a].cells[col].getAttribute("data-v");
        var y = rows[b].cells[col].getAttribute("data-v");
        var c = numeric ? Number(x) - Number(y) : (x < y ? -1 : (x > y ? 1 : 0));
        return c * dir || Number(rows[a].getAttribute("data-i")) - Number(rows[b].getAttribute("data-i"));
      });
      rows = order.map(function (i) { return rows[i]; });
      texts = order.map(function (i) { return texts[i]; });
      rows.forEach(function (r) { body.appendChild(r); });
      heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
    });
  });

  // A link to a rule opens its (closed) details section.
  function openTarget() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    var el = id ? document.getElementById(id) : null;
    if (el && el.tagName === "DETAILS") { el.open = true; }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
}());
