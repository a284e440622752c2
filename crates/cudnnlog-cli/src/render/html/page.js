(function () {
  "use strict";
  var root = document.documentElement;
  root.classList.add("js");
  // A link to a finding opens it, wherever it was folded.
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && document.getElementById(id);
    if (el && el.tagName === "DETAILS") { el.open = true; }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
  // Filters: hide warnings or fallout, in the list and on the timeline.
  Array.prototype.forEach.call(document.querySelectorAll("input[data-filter]"), function (box) {
    box.addEventListener("change", function () {
      root.classList.toggle("hide-" + box.getAttribute("data-filter"), !box.checked);
    });
  });
  // A copy button after each command.
  function select(el) {
    var range = document.createRange();
    range.selectNodeContents(el);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }
  Array.prototype.forEach.call(document.querySelectorAll("code.cmd"), function (code) {
    var button = document.createElement("button");
    button.type = "button";
    button.className = "copy";
    button.textContent = "copy";
    button.addEventListener("click", function () {
      var done = function () { button.textContent = "copied"; };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(code.textContent).then(done, function () { select(code); });
      } else {
        select(code);
      }
    });
    code.parentNode.insertBefore(button, code.nextSibling);
  });
})();
