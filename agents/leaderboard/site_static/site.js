// The leaderboard site's only script, inlined into every page by site.py: sortable
// tables, the heat map's tooltip and the replay stepper. No libraries, no network.
"use strict";

// Sortable tables: a click on a header sorts by that column (numbers as numbers),
// a second click reverses.
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (header) {
    header.addEventListener("click", function () {
      var column = Number(header.dataset.column);
      var ascending = !header.classList.contains("sorted-ascending");
      table.querySelectorAll("th").forEach(function (h) {
        h.classList.remove("sorted-ascending", "sorted-descending");
      });
      header.classList.add(ascending ? "sorted-ascending" : "sorted-descending");
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      function key(row) {
        var text = row.cells[column].dataset.sort;
        var number = Number(text);
        return text !== "" && !isNaN(number) ? number : text;
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        var order = typeof x === typeof y ? (x < y ? -1 : x > y ? 1 : 0)
                                          : (typeof x === "number" ? -1 : 1);
        return ascending ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});

// Heat map: hovering a cell shows its interval and number of games beside the pointer.
var tooltip = document.getElementById("tooltip");
if (tooltip) {
  document.querySelectorAll("#heatmap td.cell").forEach(function (cell) {
    cell.addEventListener("mouseenter", function () {
      tooltip.textContent = cell.dataset.tip;
      tooltip.hidden = false;
    });
    cell.addEventListener("mousemove", function (event) {
      tooltip.style.left = event.clientX + 12 + "px";
      tooltip.style.top = event.clientY + 12 + "px";
    });
    cell.addEventListener("mouseleave", function () { tooltip.hidden = true; });
  });
}

// Replay: the frames were computed in Python at export time (agents/leaderboard/replay.py).
var replayData = document.getElementById("replay-data");
if (replayData) {
  var replay = JSON.parse(replayData.textContent);
  var frames = replay.frames;
  var current = 0;
  var moves = document.getElementById("moves");
  frames.forEach(function (frame, index) {
    if (index === 0) return;
    var item = document.createElement("li");
    item.textContent = frame.move;
    if (frame.chance) item.classList.add("chance");
    item.addEventListener("click", function () { show(index); });
    moves.appendChild(item);
  });
  var views = document.getElementById("views");
  replay.seats.forEach(function (seat, index) {
    var title = document.createElement("h3");
    title.textContent = "What " + seat + " (" + replay.seat_agents[index] + ") saw";
    var board = document.createElement("pre");  // the seat's view drawn, where the game has one
    board.id = "board-" + index;
    board.className = "board";
    var view = document.createElement("pre");
    view.id = "view-" + index;
    views.appendChild(title);
    views.appendChild(board);
    views.appendChild(view);
  });
  function returnsText(values) {
    return replay.seats.map(function (seat, index) {
      return seat + ": " + (values[index] > 0 ? "+" : "") + values[index];
    }).join("\n");
  }
  function show(index) {
    current = Math.max(0, Math.min(frames.length - 1, index));
    var frame = frames[current];
    document.getElementById("position").textContent =
      "step " + current + " of " + (frames.length - 1) +
      (current === frames.length - 1 ? " (end)" : "");
    document.getElementById("true-state").textContent = frame.state;
    var picture = document.getElementById("picture");
    picture.hidden = !frame.picture;
    if (frame.picture) picture.src = frame.picture;
    document.getElementById("returns").textContent = returnsText(frame.returns) +
      (current === frames.length - 1 ? "\nfinal returns" : "");
    frame.boards.forEach(function (text, seat) {
      var board = document.getElementById("board-" + seat);
      board.hidden = text === null;
      board.textContent = text === null ? "" : text;
    });
    frame.seen.forEach(function (count, seat) {
      // Steps with nothing for the seat (a GDL-II step of only others' moves) are "".
      var steps = replay.views[seat].slice(0, count).filter(Boolean);
      document.getElementById("view-" + seat).textContent =
        steps.length ? steps.map(function (s, i) { return (i + 1) + ". " + s; }).join("\n")
                     : "(nothing yet)";
    });
    Array.prototype.forEach.call(moves.children, function (item, i) {
      item.classList.toggle("current", i + 1 === current);
      item.classList.toggle("future", i + 1 > current);
    });
  }
  document.getElementById("first").addEventListener("click", function () { show(0); });
  document.getElementById("back").addEventListener("click", function () { show(current - 1); });
  document.getElementById("forward").addEventListener("click", function () { show(current + 1); });
  document.getElementById("last").addEventListener("click", function () { show(frames.length - 1); });
  document.addEventListener("keydown", function (event) {
    if (event.key === "ArrowRight") show(current + 1);
    if (event.key === "ArrowLeft") show(current - 1);
  });
  // "#end" or "#step=N" in the address opens the replay at that step.
  var wanted = /^#step=(\d+)$/.exec(location.hash);
  show(location.hash === "#end" ? frames.length - 1 : wanted ? Number(wanted[1]) : 0);
}
