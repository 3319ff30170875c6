import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  type ChartConfiguration,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
} from "chart.js";
import { useEffect, useRef } from "react";

// Only the pieces the console draws, so the bundle carries no other chart types.
Chart.register(
  BarController,
  BarElement,
  LineController,
  LineElement,
  PointElement,
  CategoryScale,
  LinearScale,
  Legend,
  Tooltip,
);

/** One series of a chart. */
export interface Series {
  label: string;
  data: number[];
  color: string;
}

/**
 * A Chart.js chart on a canvas, drawn again when its data changes. The canvas is an image to
 * assistive technology, labelled with `summary`; the numbers are in a table beside it.
 */
export function ChartView(props: {
  type: "line" | "bar";
  labels: string[];
  series: Series[];
  summary: string;
  stacked?: boolean;
  horizontal?: boolean;
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const config: ChartConfiguration<"line" | "bar"> = {
      type: props.type,
      data: {
        labels: props.labels,
        datasets: props.series.map((s) => ({
          label: s.label,
          data: s.data,
          backgroundColor: s.color,
          borderColor: s.color,
          pointRadius: 0,
          tension: 0.2,
        })),
      },
      options: {
        animation: false,
        maintainAspectRatio: false,
        indexAxis: props.horizontal ? "y" : "x",
        interaction: { mode: "index", intersect: false },
        scales: {
          x: { stacked: props.stacked, ticks: { maxTicksLimit: 8 } },
          y: { stacked: props.stacked, beginAtZero: true },
        },
        plugins: { legend: { position: "bottom" } },
      },
    };
    const chart = new Chart(canvas.current, config);
    return () => chart.destroy();
  }, [props.type, props.labels, props.series, props.stacked, props.horizontal]);
  return (
    <div className="chart">
      <canvas ref={canvas} role="img" aria-label={props.summary} />
    </div>
  );
}
