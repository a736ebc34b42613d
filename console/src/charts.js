// Live line charts over the store's five-minute history, drawn by uPlot (loaded as a classic script,
// window.uPlot). The chart element also carries its latest values as data attributes, so that tests
// and curious users can read what is drawn.
const HEIGHT = 200;

// A chart in `el` with one line per entry of `series` ({label, stroke, dash?}).
export function lineChart(el, series) {
  const { uPlot } = window;
  const opts = {
    width: Math.max(300, el.clientWidth || 600),
    height: HEIGHT,
    scales: { x: { time: true }, y: { range: (u, min, max) => [0, Math.max(1, max * 1.1)] } },
    series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.stroke, dash: s.dash, width: 2, spanGaps: false,
      value: (u, v) => (v === null || v === undefined ? '—' : (Math.round(v * 10) / 10).toString()) }))],
    axes: [{}, { size: 60 }],
    legend: { live: false },
    cursor: { drag: { x: false, y: false } },
  };
  const plot = new uPlot(opts, [[], ...series.map(() => [])], el);
  const resize = new ResizeObserver(() => {
    const width = Math.max(300, el.clientWidth);
    if (width !== plot.width) plot.setSize({ width, height: HEIGHT });
  });
  resize.observe(el);

  return {
    // data: [seconds[], line1[], line2[], ...] (uPlot's layout).
    setData(data) {
      plot.setData(data.map((a) => a.slice()));
      el.dataset.points = String(data[0].length);
      series.forEach((s, i) => {
        const line = data[i + 1];
        const last = line.length ? line[line.length - 1] : null;
        el.dataset[`last${s.label[0].toUpperCase()}${s.label.slice(1)}`] = last === null ? '' : String(last);
      });
    },
    destroy() {
      resize.disconnect();
      plot.destroy();
    },
  };
}
