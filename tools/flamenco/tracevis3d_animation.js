// SPDX-License-Identifier: GPL-3.0-or-later
//
// TraceVis3D animation: a Flamenco v3 job type for the .blend that
// `tracevis3d render-animation ... --save scene.blend` writes.
//
// That .blend is self-contained (attributes, Geometry Nodes modifiers and
// keyframes; no add-on, no trace file, Blender's built-in font), so a stock
// Blender on every worker renders it.  This job type renders PNG frames in
// chunks of `chunk_size` frames (one `blender-render` command per chunk,
// `--render-frame A..B`), then joins them into an H.264 MP4 with a
// `frames-to-video` task that waits for every chunk.
//
// Install: copy this file into the `scripts/` folder beside the Flamenco
// Manager executable and restart the Manager; the job type is then called
// "tracevis3d-animation" (the file name, `_` written as `-`).
// See docs/animation.md.

const JOB_TYPE = {
  label: "TraceVis3D Animation",
  description: "Render a TraceVis3D animation (.blend saved by render-animation) to PNG frames and an MP4",
  settings: [
    // Filled in by the submitter (the Blender add-on or tools/flamenco/submit.py):
    { key: "blendfile", type: "string", required: true, visible: "web",
      description: "Path of the saved .blend as the workers see it" },
    { key: "frames", type: "string", required: true,
      eval: "f'{C.scene.frame_start}-{C.scene.frame_end}'",
      description: "Scene frames to render: '1-300', or a list like '1-100, 201-300'" },
    { key: "chunk_size", type: "int32", default: 30,
      description: "Frames per render task (each task starts Blender once and loads the .blend once)" },
    { key: "fps", type: "float", eval: "C.scene.render.fps / C.scene.render.fps_base",
      description: "Frames per second of the video" },
    { key: "render_output_root", type: "string", subtype: "dir_path", required: true,
      description: "Folder under which the job's frames and video are written" },
    { key: "make_video", type: "bool", default: true,
      description: "Also join the frames into an H.264 MP4 (frames-to-video)" },
  ],
};

// The saved .blend may be set to write a video (render-animation -o out.mp4):
// every chunk writes PNG frames instead, so that chunks can run on many workers.
const AS_PNG = [
  "import bpy",
  "for s in bpy.data.scenes:",
  "    im = s.render.image_settings",
  "    if hasattr(im, 'media_type'):  # Blender 5.0+",
  "        im.media_type = 'IMAGE'",
  "    im.file_format = 'PNG'",
  "    s.render.use_file_extension = True",
].join("\n");

function compileJob(job) {
  print("TraceVis3D animation job:", job.name);
  const settings = job.settings;
  const stem = path.stem(settings.blendfile).replace(".flamenco", "");
  const outDir = path.join(settings.render_output_root, "tracevis3d", `${stem}-${formatTimestampLocal(job.created)}`);
  settings.render_output_path = path.join(outDir, "frame_####");

  const renderTasks = [];
  for (const chunk of frameChunker(settings.frames, settings.chunk_size)) {
    const task = author.Task(`render-${chunk}`, "blender");
    task.addCommand(author.Command("blender-render", {
      exe: "{blender}",
      exeArgs: "{blenderArgs}",
      argsBefore: [],
      blendfile: settings.blendfile,
      args: [
        "--python-expr", AS_PNG,
        "--render-output", path.join(outDir, "frame_####"),
        "--render-frame", chunk.replaceAll("-", ".."), // Blender's range is A..B
      ],
    }));
    renderTasks.push(task);
    job.addTask(task);
  }

  if (!settings.make_video || !settings.fps) {
    return;
  }
  const video = author.Task("frames-to-video", "ffmpeg");
  video.addCommand(author.Command("frames-to-video", {
    exe: "ffmpeg",
    fps: settings.fps,
    inputGlob: path.join(outDir, "frame_*.png"),
    outputFile: path.join(outDir, `${stem}.mp4`),
    args: [
      "-c:v", "libx264",
      "-crf", "18",
      "-pix_fmt", "yuv420p",
      "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2",
      "-r", settings.fps,
      "-y",
    ],
  }));
  for (const task of renderTasks) {
    video.addDependency(task);
  }
  job.addTask(video);
}
