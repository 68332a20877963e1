// Copy buttons: <button class="copy" data-copy="ID" hidden> copies the value of the element #ID.
// Without JavaScript the buttons stay hidden and the value is selected and copied by hand.
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("button.copy[data-copy]").forEach(function (button) {
    var field = document.getElementById(button.getAttribute("data-copy"));
    var status = button.parentNode.querySelector(".copy-status");
    if (!field || !navigator.clipboard) { return; }
    button.hidden = false;
    button.addEventListener("click", function () {
      navigator.clipboard.writeText(field.value).then(function () {
        if (status) { status.textContent = "Copied."; }
      }, function () {
        field.select();
        if (status) { status.textContent = "Select the text and copy it."; }
      });
    });
  });
});

// The event catalogue: following the index to a type opens its "Schema and example" (closed
// otherwise, so the page stays short). Without JavaScript the person opens it by hand.
function openTargetedType() {
  var id = decodeURIComponent(window.location.hash.slice(1));
  var section = id ? document.getElementById(id) : null;
  var pair = section ? section.querySelector("details.schema-example-pair") : null;
  if (pair) { pair.open = true; }
}
document.addEventListener("DOMContentLoaded", openTargetedType);
window.addEventListener("hashchange", openTargetedType);
