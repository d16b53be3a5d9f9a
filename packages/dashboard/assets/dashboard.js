// stint dashboard: the page's only script. It shows times in the viewer's time zone,
// keeps the overview and a job's page current (from the server's event stream, else by
// polling), says plainly when updates stopped and why, fills in the viewer's UTC offset
// for time filters, and asks before destructive actions. Every page works without it.
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

  var timeOfDay = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" });

  // "Updated 12 s ago", kept current, so figures that stopped changing say so.
  function ageText(date) {
    var seconds = Math.max(0, Math.round((Date.now() - date.getTime()) / 1000));
    if (seconds < 3) return "now";
    if (seconds < 120) return seconds + " s ago";
    if (seconds < 7200) return Math.round(seconds / 60) + " min ago";
    return "at " + format.format(date);
  }

  function ageRelativeTimes() {
    document.querySelectorAll("time[data-relative]").forEach(function (element) {
      var date = new Date(element.getAttribute("datetime"));
      if (!isNaN(date.getTime())) element.textContent = ageText(date);
    });
  }

  function showStale(text) {
    document.querySelectorAll("[data-stale]").forEach(function (banner) {
      banner.textContent = text;
      banner.hidden = false;
    });
  }

  function hideStale() {
    document.querySelectorAll("[data-stale]").forEach(function (banner) {
      banner.hidden = true;
      banner.textContent = "";
    });
  }

  // Why updates stopped, in words: the viewer's sign-in ended, the database or the server is gone.
  function staleReason(status, since) {
    var from = " The figures below are from " + timeOfDay.format(since) + ".";
    if (status === 401) return "Updates stopped: you are signed out (the server answered 401). Reload the page to sign in again." + from;
    if (status === 503) return "Updates stopped: the database did not answer (503). Trying again." + from;
    if (status === 0) return "Updates stopped: the dashboard server cannot be reached. Trying again." + from;
    return "Updates stopped: the server answered " + status + ". Trying again." + from;
  }

  // A live part of a page: refreshed when the event stream says something changed, or every
  // data-refresh-ms when there is no stream (or it failed); a failed refresh shows why.
  function live(section) {
    var url = section.getAttribute("data-refresh");
    var part = section.getAttribute("data-refresh-part");
    var eventsUrl = section.getAttribute("data-events");
    var every = Number(section.getAttribute("data-refresh-ms")) || 5000;
    var busy = false;
    var again = false;
    var stopped = false;
    var streaming = false;
    var lastGood = new Date();
    var lastPoll = Date.now();
    var stream = null;
    var pending = null;

    function swap(text) {
      if (part) {
        var found = new DOMParser().parseFromString(text, "text/html").getElementById(part);
        if (!found) return;
        section.innerHTML = found.innerHTML;
      } else {
        section.innerHTML = text;
      }
      localizeTimes(section);
      ageRelativeTimes();
    }

    function fail(status) {
      section.classList.add("is-stale");
      section.setAttribute("data-stale-status", String(status));
      showStale(staleReason(status, lastGood));
      if (status === 401) stop();
    }

    function stop() {
      stopped = true;
      if (stream) stream.close();
      stream = null;
    }

    function refresh() {
      if (stopped) return;
      if (busy) {
        again = true;
        return;
      }
      busy = true;
      lastPoll = Date.now();
      fetch(url, { credentials: "same-origin", headers: { Accept: "text/html" }, cache: "no-store" })
        .then(function (response) {
          if (!response.ok) {
            fail(response.status);
            return null;
          }
          return response.text();
        })
        .then(function (text) {
          if (text === null) return;
          swap(text);
          lastGood = new Date();
          section.classList.remove("is-stale");
          section.removeAttribute("data-stale-status");
          hideStale();
          section.setAttribute("data-refreshed", String(Date.now()));
        })
        .catch(function () {
          fail(0);
        })
        .then(function () {
          busy = false;
          if (again) {
            again = false;
            refresh();
          }
        });
    }

    // Many events in a burst make one refresh.
    function soon() {
      if (pending !== null) return;
      pending = setTimeout(function () {
        pending = null;
        refresh();
      }, 250);
    }

    function connect() {
      if (stopped || !eventsUrl || typeof EventSource !== "function") return;
      stream = new EventSource(eventsUrl);
      stream.addEventListener("ready", function () {
        var wasDown = !streaming;
        streaming = true;
        section.setAttribute("data-live", "events");
        // Whatever changed while the stream was down is read once now.
        if (wasDown && section.hasAttribute("data-stream-opened")) refresh();
        section.setAttribute("data-stream-opened", "1");
      });
      stream.addEventListener("job", soon);
      stream.addEventListener("gap", soon);
      stream.onerror = function () {
        streaming = false;
        section.setAttribute("data-live", "polling");
        // Learn why from a plain request; polling carries on until the stream is back.
        refresh();
        if (stream && stream.readyState === 2) {
          stream = null;
          setTimeout(connect, 10000);
        }
      };
    }

    section.setAttribute("data-live", "polling");
    connect();
    setInterval(
      function () {
        if (stopped || document.hidden) return;
        // With the stream up, a slow refresh keeps ages and durations current; without it, poll.
        var wait = streaming ? Math.max(every, 60000) : every;
        if (Date.now() - lastPoll >= wait - 50) refresh();
      },
      Math.min(every, 1000),
    );
  }

  document.addEventListener("DOMContentLoaded", function () {
    localizeTimes(document);
    document.querySelectorAll("[data-zone]").forEach(function (element) {
      element.textContent = zone;
    });
    document.querySelectorAll("input[data-tz-offset]").forEach(function (input) {
      input.value = String(-new Date().getTimezoneOffset());
    });
    ageRelativeTimes();
    setInterval(ageRelativeTimes, 5000);
    document.querySelectorAll("[data-refresh]").forEach(live);
  });

  document.addEventListener("submit", function (event) {
    var form = event.target;
    var question = form && form.getAttribute && form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) event.preventDefault();
  });
})();
