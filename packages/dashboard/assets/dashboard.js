// stint dashboard: the page's only script. It shows times in the viewer's time zone,
// refreshes the overview in place, fills in the viewer's UTC offset for time filters,
// and asks before destructive actions. Every page works without it.
(function () {
  "use strict";
  var zone = Intl.DateTimeFormat().resolvedOptions().timeZone || "local time";
  var format = new Intl.DateTimeFormat(undefined, {
    year: "numeric",
    month: "short",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hourCycle: "h23",
  });

  function localizeTimes(root) {
    root.querySelectorAll("time[datetime]").forEach(function (element) {
      if (element.hasAttribute("data-relative")) return;
      var date = new Date(element.getAttribute("datetime"));
      if (!isNaN(date.getTime())) {
        element.textContent = format.format(date);
        element.title = element.getAttribute("datetime");
      }
    });
  }

  function refresh(section) {
    var url = section.getAttribute("data-refresh");
    var every = Number(section.getAttribute("data-refresh-ms")) || 5000;
    var busy = false;
    setInterval(function () {
      if (busy || document.hidden) return;
      busy = true;
      fetch(url, { credentials: "same-origin", headers: { Accept: "text/html" } })
        .then(function (response) {
          return response.ok ? response.text() : null;
        })
        .then(function (text) {
          if (text !== null) {
            section.innerHTML = text;
            localizeTimes(section);
            section.setAttribute("data-refreshed", String(Date.now()));
          }
        })
        .catch(function () {
          /* the next tick tries again */
        })
        .then(function () {
          busy = false;
        });
    }, every);
  }

  document.addEventListener("DOMContentLoaded", function () {
    localizeTimes(document);
    document.querySelectorAll("[data-zone]").forEach(function (element) {
      element.textContent = zone;
    });
    document.querySelectorAll("input[data-tz-offset]").forEach(function (input) {
      input.value = String(-new Date().getTimezoneOffset());
    });
    document.querySelectorAll("[data-refresh]").forEach(refresh);
  });

  document.addEventListener("submit", function (event) {
    var form = event.target;
    var question = form && form.getAttribute && form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) event.preventDefault();
  });
})();
