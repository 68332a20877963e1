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
