// report.html (html_report.h).

#include "tools/compare/report/html_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/fs/atomic_file.h"
#include "tools/compare/input/python_json.h"
#include "tools/compare/report/module_tree.h"
#include "tools/compare/report/report_format.h"
#include "tools/compare/report/terminal_summary.h"

namespace tprobe::compare {
namespace {

constexpr int kPlotWidth = 960;
constexpr int kPlotHeight = 240;
constexpr size_t kMaxMarks = 400;  // marked non-passing rows in the plot

std::string Escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// log10 of the score, clipped to [-8, 2]; the bottom for 0 and NaN.
double PlotLevel(double score) {
  if (std::isnan(score) || score <= 0) return -8;
  if (std::isinf(score)) return 2;
  return std::clamp(std::log10(score), -8.0, 2.0);
}

const char* VerdictColor(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "#2a7";
    case Verdict::kWarning:
      return "#d90";
    case Verdict::kError:
      return "#d22";
    case Verdict::kMissing:
      return "#84c";
    case Verdict::kExtra:
      return "#48c";
  }
  return "#000";
}

std::string Plot(const PairResult& p) {
  const size_t n = p.rows.size();
  if (n == 0) return "<p>No rows.</p>";
  auto x_of = [&](size_t i) {
    return 50.0 + (kPlotWidth - 60.0) * (n == 1 ? 0.5 : double(i) / (n - 1));
  };
  auto y_of = [&](double level) {
    return 10.0 + (kPlotHeight - 40.0) * (2.0 - level) / 10.0;
  };
  char buf[160];
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    std::to_string(kPlotWidth) + "\" height=\"" +
                    std::to_string(kPlotHeight) + "\" role=\"img\">";
  for (int level = 2; level >= -8; level -= 2) {
    std::snprintf(buf, sizeof buf,
                  "<line x1=\"50\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" "
                  "stroke=\"#ddd\"/><text x=\"4\" y=\"%.1f\" "
                  "font-size=\"11\">1e%d</text>",
                  kPlotWidth - 10, y_of(level), y_of(level), y_of(level) + 4,
                  level);
    svg += buf;
  }
  // The largest level per pixel column, as one line.
  const size_t columns = std::min<size_t>(n, kPlotWidth - 60);
  std::vector<double> top(columns, -8);
  for (size_t i = 0; i < n; ++i) {
    const size_t c = columns == n ? i : i * columns / n;
    top[c] = std::max(top[c], PlotLevel(p.rows[i].score));
  }
  svg += "<polyline fill=\"none\" stroke=\"#357\" stroke-width=\"1\" points=\"";
  for (size_t c = 0; c < columns; ++c) {
    const size_t i = columns == n ? c : c * n / columns;
    std::snprintf(buf, sizeof buf, "%.1f,%.1f ", x_of(i), y_of(top[c]));
    svg += buf;
  }
  svg += "\"/>";
  size_t marks = 0;
  for (size_t i = 0; i < n && marks < kMaxMarks; ++i) {
    const RowResult& r = p.rows[i];
    if (r.verdict == Verdict::kPass) continue;
    ++marks;
    const double level = std::isnan(r.score) ? 2 : PlotLevel(r.score);
    std::snprintf(buf, sizeof buf,
                  "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\">",
                  x_of(i), y_of(level), VerdictColor(r.verdict));
    svg += buf;
    svg += "<title>" + Escape(p.RowOf(r).name) + " (" + VerdictName(r.verdict) +
           ")</title></circle>";
  }
  if (p.first_divergence) {
    const double x = x_of(*p.first_divergence);
    std::snprintf(buf, sizeof buf,
                  "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"10\" y2=\"%d\" "
                  "stroke=\"#d22\" stroke-dasharray=\"4 3\"/>",
                  x, x, kPlotHeight - 30);
    svg += buf;
  }
  std::snprintf(buf, sizeof buf,
                "<text x=\"50\" y=\"%d\" font-size=\"11\">execution order "
                "(%zu rows) &#8594;  y: MaxRelativeErr (tensor) or the "
                "largest relative statistics difference</text>",
                kPlotHeight - 8, n);
  svg += buf;
  return svg + "</svg>";
}

Json TableData(const CompareResult& result) {
  size_t failing = 0;
  for (const PairResult& p : result.pairs) {
    failing += p.rows.size() - p.counts[0];
  }
  size_t passing_room = kMaxTableRows > failing ? kMaxTableRows - failing : 0;
  Json rows = Json::array();
  for (const PairResult& p : result.pairs) {
    for (size_t i = 0; i < p.rows.size(); ++i) {
      const RowResult& r = p.rows[i];
      if (r.verdict == Verdict::kPass) {
        if (passing_room == 0) continue;
        --passing_room;
      }
      const Row& row = p.RowOf(r);
      auto metric = [](double v) -> Json {
        return std::isfinite(v) ? Json(v) : Json(FormatNumber(v));
      };
      Json cos = nullptr, max_abs = nullptr, max_rel = nullptr;
      if (r.tensor) {
        cos = metric(r.tensor->cosine);
        max_abs = metric(r.tensor->max_abs);
        max_rel = metric(r.tensor->max_relative);
      }
      rows.push_back(Json::array(
          {p.pair.label, i, row.name, VerdictName(r.verdict), r.result, cos,
           max_abs, max_rel, metric(r.score), r.message}));
    }
  }
  return rows;
}

constexpr char kStyle[] = R"(<style>
body{font:14px/1.4 system-ui,sans-serif;margin:20px;color:#222}
h1{font-size:20px}h2{font-size:16px;margin-top:24px}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;
text-align:left;font-size:12px}th{background:#eee;cursor:pointer}
.pass{color:#2a7}.warning{color:#d90}.error{color:#d22}.missing{color:#84c}
.extra{color:#48c}.box{border-left:4px solid #d22;padding:6px 12px;
background:#fdf3f3;white-space:pre-wrap;font-family:monospace}
.ok{border-left-color:#2a7;background:#f1faf5}
.tree details>details,.tree details>.leaf{margin-left:18px}
.tree summary{cursor:pointer}.tree small{color:#666}
</style>)";

constexpr char kScript[] = R"(<script>
window.addEventListener('error', function (e) {
  document.body.setAttribute('data-error', String(e.message));
});
(function () {
  var rows = JSON.parse(document.getElementById('rows').textContent);
  var names = ['pair', 'order', 'row', 'verdict', 'Result', 'Cosine',
               'MaxAbsErr', 'MaxRelativeErr', 'score', 'Err_message'];
  var table = document.getElementById('table');
  var filter = document.getElementById('filter');
  var sortColumn = 1, ascending = true;
  function cell(v) {
    if (v === null) return '';
    if (typeof v === 'number') return String(Math.round(v * 1e12) / 1e12);
    return String(v);
  }
  function key(v) {
    if (v === null) return -Infinity;
    if (typeof v === 'number') return v;
    if (v === 'inf') return Infinity;
    if (v === 'Nan') return Infinity;
    return v;
  }
  function render() {
    var shown = rows.filter(function (r) {
      return filter.value === 'all' || r[3] !== 'pass';
    });
    shown.sort(function (a, b) {
      var x = key(a[sortColumn]), y = key(b[sortColumn]);
      if (x === y) return a[1] - b[1];
      var less = typeof x === typeof y ? x < y : typeof x === 'number';
      return (less ? -1 : 1) * (ascending ? 1 : -1);
    });
    var head = document.createElement('tr');
    names.forEach(function (name, i) {
      var th = document.createElement('th');
      th.textContent = name + (i === sortColumn ? (ascending ? ' \u25B2' : ' \u25BC') : '');
      th.addEventListener('click', function () {
        ascending = sortColumn === i ? !ascending : true;
        sortColumn = i;
        render();
      });
      head.appendChild(th);
    });
    var body = document.createDocumentFragment();
    body.appendChild(head);
    shown.forEach(function (r) {
      var tr = document.createElement('tr');
      r.forEach(function (v, i) {
        var td = document.createElement('td');
        td.textContent = cell(v);
        if (i === 3) td.className = v;
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    table.textContent = '';
    table.appendChild(body);
    document.getElementById('shown').textContent = shown.length;
  }
  filter.addEventListener('change', render);
  render();
  document.body.setAttribute('data-ready', '1');
})();
</script>)";

}  // namespace

std::string HtmlReport(const CompareResult& result, const std::string& target,
                       const std::string& baseline) {
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<link rel=\"icon\" href=\"data:,\"><title>tprobe compare</title>";
  h += kStyle;
  h += "</head><body><h1>tprobe compare</h1><p>target: <code>" +
       Escape(target) + "</code><br>baseline: <code>" + Escape(baseline) +
       "</code></p>";
  h += "<h2>Summary</h2><table><tr><th>pair</th><th>mode</th><th>rows</th>"
       "<th>pass</th><th>warning</th><th>error</th><th>missing</th>"
       "<th>extra</th></tr>";
  for (const PairResult& p : result.pairs) {
    h += "<tr><td>" + Escape(p.pair.label.empty() ? "dump" : p.pair.label) +
         "</td><td>" + ModeName(p.mode) + "</td><td>" +
         std::to_string(p.rows.size()) + "</td>";
    for (size_t c : p.counts) h += "<td>" + std::to_string(c) + "</td>";
    h += "</tr>";
  }
  h += "</table><h2>First divergence</h2>";
  if (result.passed()) {
    h += "<div class=\"box ok\">Every row passes.</div>";
  } else {
    h += "<div class=\"box\" id=\"first\">" +
         Escape(DescribeFirstDivergence(result)) + "</div>";
    h += "<p>Its chain of modules, outermost first:</p><ol id=\"chain\">";
    for (const std::string& m :
         DivergenceChain(result.pairs[*result.first_pair])) {
      h += "<li><code>" + Escape(m) + "</code></li>";
    }
    h += "</ol>";
  }
  const PairResult* plotted =
      result.first_pair ? &result.pairs[*result.first_pair]
                        : (result.pairs.empty() ? nullptr : &result.pairs[0]);
  if (plotted && !plotted->rows.empty()) {
    h += "<h2>Module tree" +
         (plotted->pair.label.empty()
              ? std::string()
              : " (" + Escape(plotted->pair.label) + ")") +
         "</h2><p>Each call and module with the worst verdict under it; "
         "the first divergence's chain is open and bold, a subtree that "
         "passed is one line.</p><div id=\"tree\">" +
         ModuleTreeHtml(*plotted) + "</div>";
  }
  if (plotted) {
    h += "<h2>Error along execution order" +
         (plotted->pair.label.empty()
              ? std::string()
              : " (" + Escape(plotted->pair.label) + ")") +
         "</h2>" + Plot(*plotted);
  }
  h += "<h2>Rows</h2><p><label>show <select id=\"filter\"><option "
       "value=\"failing\">rows that did not pass</option><option "
       "value=\"all\">all rows in this page</option></select></label> "
       "(<span id=\"shown\"></span> shown; at most " +
       std::to_string(kMaxTableRows) +
       " in this page, every row in the CSV files). Click a heading to "
       "sort.</p><table id=\"table\"></table>";
  std::string data =
      TableData(result).dump(-1, ' ', true, Json::error_handler_t::replace);
  // Nothing in the data may end the script element.
  for (size_t at = 0; (at = data.find("</", at)) != std::string::npos;) {
    data.replace(at, 2, "<\\/");
  }
  h += "<script id=\"rows\" type=\"application/json\">" + data + "</script>";
  h += kScript;
  h += "</body></html>\n";
  return h;
}

Status WriteHtmlReport(const CompareResult& result, const std::string& target,
                       const std::string& baseline, const std::string& dir) {
  return fs::WriteFileAtomic(dir + "/report.html",
                             HtmlReport(result, target, baseline));
}

}  // namespace tprobe::compare
