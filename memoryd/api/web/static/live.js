// The live activity page: new events arrive over server-sent events as HTML fragments the server
// rendered (and escaped); each goes on top of the list, no reload.
(function () {
  var list = document.getElementById("activity"), status = document.getElementById("live-status");
  if (!list || !window.EventSource) return;
  function show(state, text) { if (status) { status.dataset.state = state; status.textContent = text; } }
  var source = new EventSource(list.dataset.stream);
  source.addEventListener("open", function () { show("open", "live"); });
  source.addEventListener("error", function () { show("error", "reconnecting…"); });
  source.addEventListener("activity", function (message) {
    var holder = document.createElement("template");
    holder.innerHTML = message.data;
    var node = holder.content.firstElementChild;
    if (!node || document.getElementById(node.id)) return;
    list.insertBefore(node, list.firstChild);
    if (window.memorydTimes) window.memorydTimes(node);
    var empty = document.getElementById("empty");
    if (empty) empty.remove();
  });
})();
