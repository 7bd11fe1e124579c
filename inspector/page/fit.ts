/**
 * The chart's fit (issue 27 item 3), pure: the whole chart when its text stays at
 * {@link READABLE_PX} or more; else its width, from the top, when its text is readable so; else
 * the smallest scale at which its text is readable, from the top left, wider than the window: the
 * page says so ({@link Zoom.wider}) and the rest is a drag or an arrow key away. Readable first:
 * at fit on 1280×800 the full chart (1,223 px wide since `awaiting.inDoubt`) cannot fit the
 * width at 11 px; fitting the width made its text 6–8 px (issue 38 asked for both; the Chromium
 * suites hold 11 px at fit).
 */

/** The smallest text size the fit keeps, CSS px. */
export const READABLE_PX = 11;

/** A zoom: scale, then a translation in CSS px. */
export interface Zoom {
  scale: number;
  x: number;
  y: number;
  /** At this scale the chart is wider than the window (only a fit sets it). */
  wider?: boolean;
}

/** The zoom that fits a chart of `chart` px, whose smallest text is `smallestFontPx`, into `box`. */
export function fitZoom(
  box: { width: number; height: number },
  chart: { width: number; height: number },
  smallestFontPx: number,
): Zoom {
  const readable = READABLE_PX / smallestFontPx;
  const whole = Math.min(box.width / chart.width, box.height / chart.height);
  const across = box.width / chart.width;
  const scale = whole >= readable ? whole : Math.max(across, readable);
  return {
    scale,
    x: Math.max(0, (box.width - chart.width * scale) / 2),
    y: whole >= readable ? (box.height - chart.height * scale) / 2 : 0,
    wider: chart.width * scale > box.width + 0.5,
  };
}

/** A zoom by `factor` about the point (cx, cy), its scale kept between 0.1 and 4. */
export function zoomAbout(zoom: Zoom, factor: number, cx: number, cy: number): Zoom {
  const next = Math.min(4, Math.max(0.1, zoom.scale * factor));
  return {
    scale: next,
    x: cx - ((cx - zoom.x) * next) / zoom.scale,
    y: cy - ((cy - zoom.y) * next) / zoom.scale,
  };
}
