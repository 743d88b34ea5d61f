// Times arrive as <time datetime="…Z"> with a UTC text; show them in the viewer's own time zone.
// live.js calls memorydTimes(node) for each event it inserts.
(function () {
  var format = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
  function localize(root) {
    var times = (root || document).querySelectorAll("time[datetime]");
    for (var i = 0; i < times.length; i++) {
      var when = new Date(times[i].getAttribute("datetime"));
      if (isNaN(when.getTime())) continue;
      if (!times[i].title) times[i].title = when.toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
      times[i].textContent = format.format(when);
      times[i].dataset.local = "1";
    }
  }
  window.memorydTimes = localize;
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", function () { localize(); });
  else localize();
})();
