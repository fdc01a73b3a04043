(function () {
  "use strict";
  var form = document.getElementById("filters");
  function checked(name) {
    var on = {};
    form.querySelectorAll("input[name=" + name + "]").forEach(function (i) { on[i.value] = i.checked; });
    return on;
  }
  function apply() {
    var sev = checked("severity"), st = checked("status"), shown = 0, total = 0;
    document.querySelectorAll("article.finding").forEach(function (f) {
      var visible = !!sev[f.dataset.severity] && !!st[f.dataset.status];
      f.hidden = !visible;
      total += 1;
      if (visible) { shown += 1; }
    });
    document.querySelectorAll("div.group").forEach(function (g) {
      g.hidden = g.querySelector("article.finding:not([hidden])") === null;
    });
    document.getElementById("shown").textContent = shown + " of " + total + " findings shown";
  }
  // the form only filters: submitting it (Enter in a checkbox) does nothing
  form.addEventListener("submit", function (e) { e.preventDefault(); });
  form.addEventListener("change", apply);
  apply();
}());
